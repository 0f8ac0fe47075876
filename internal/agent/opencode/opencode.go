// Package opencode runs opencode as a ralph backend.
//
// Each iteration runs
//
//	opencode run --format json [--model PROVIDER/MODEL] [ARGS…] PROMPT
//
// in the workspace, and turns the JSON events into ralph events (see
// Parser).
//
// The system prompt: opencode has no append-system-prompt flag; its
// configuration's "instructions" list names files added to the system
// prompt. ralph writes its system prompt to a temporary file and passes
// {"instructions": [FILE]} in OPENCODE_CONFIG_CONTENT for the run.
//
// Permissions: opencode run does not stop to ask; Config.PermissionMode,
// Config.MaxTurns and Config.AllowedTools are ignored.
package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "opencode"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "opencode"

// InstallHint says how to install opencode.
const InstallHint = "npm install -g opencode-ai"

// Agent is the opencode backend.
type Agent struct {
	cfg    agent.Config
	logger *slog.Logger
}

var _ agent.Agent = (*Agent)(nil)

// New returns an opencode backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cfg: cfg, logger: cliagent.Logger(logger, Name)}
}

// Available reports whether the configured opencode program is installed.
func Available(cfg agent.Config) bool {
	return cliagent.Available(cliagent.Binary(cfg, DefaultBinary))
}

// Name returns "opencode".
func (a *Agent) Name() string { return Name }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	argv := []string{cliagent.Binary(a.cfg, DefaultBinary), "run", "--format", "json"}
	if a.cfg.Model != "" {
		argv = append(argv, "--model", a.cfg.Model)
	}
	argv = append(argv, a.cfg.Args...)
	return append(argv, req.Prompt)
}

// Run runs one iteration of opencode.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	env := a.cfg.Env
	if req.System != "" {
		name, err := cliagent.WriteTemp("ralph-opencode-system-*.md", req.System)
		if err != nil {
			return agent.Result{}, fmt.Errorf("opencode system prompt: %w", err)
		}
		defer os.Remove(name)
		cfg, _ := json.Marshal(map[string]any{"instructions": []string{name}})
		env = append(append([]string(nil), env...), "OPENCODE_CONFIG_CONTENT="+string(cfg))
	}
	return cliagent.Run(ctx, a.logger, cliagent.Spec{
		Name:        Name,
		Argv:        a.Args(req),
		Dir:         req.Dir,
		Env:         env,
		IdleTimeout: req.IdleTimeout,
		KillGrace:   a.cfg.KillGrace,
		InstallHint: InstallHint,
	}, NewParser(), emit)
}

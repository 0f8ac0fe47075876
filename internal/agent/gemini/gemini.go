// Package gemini runs Google's Gemini CLI as a ralph backend.
//
// Each iteration runs
//
//	gemini --output-format stream-json --approval-mode yolo --skip-trust [-m MODEL] [ARGS…] --prompt PROMPT
//
// in the workspace, and turns the JSONL events into ralph events (see
// Parser).
//
// Trust: headless Gemini CLI refuses a folder the user has not trusted
// (exit 55, "not running in a trusted directory"). ralph passes
// --skip-trust, the flag Gemini CLI documents for automated runs: it
// trusts the workspace for this session only, and writes nothing to the
// user's trustedFolders.json.
//
// Permissions: --approval-mode yolo (every tool call approved) unless
// Config.PermissionMode names another approval mode.
//
// The system prompt: Gemini CLI has no append-system-prompt flag; its
// GEMINI_SYSTEM_MD variable names a file that replaces its built-in system
// prompt. ralph writes its system prompt to a temporary file and points
// GEMINI_SYSTEM_MD at it for the run.
//
// Config.MaxTurns and Config.AllowedTools are ignored.
package gemini

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "gemini"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "gemini"

// InstallHint says how to install Gemini CLI.
const InstallHint = "npm install -g @google/gemini-cli"

// DefaultApprovalMode is the approval mode used when Config.PermissionMode
// is empty.
const DefaultApprovalMode = "yolo"

// Agent is the Gemini CLI backend.
type Agent struct {
	cfg    agent.Config
	logger *slog.Logger
}

var _ agent.Agent = (*Agent)(nil)

// New returns a Gemini CLI backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cfg: cfg, logger: cliagent.Logger(logger, Name)}
}

// Available reports whether the configured gemini program is installed.
func Available(cfg agent.Config) bool {
	return cliagent.Available(cliagent.Binary(cfg, DefaultBinary))
}

// Name returns "gemini".
func (a *Agent) Name() string { return Name }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	mode := a.cfg.PermissionMode
	if mode == "" {
		mode = DefaultApprovalMode
	}
	argv := []string{cliagent.Binary(a.cfg, DefaultBinary), "--output-format", "stream-json", "--approval-mode", mode, "--skip-trust"}
	if a.cfg.Model != "" {
		argv = append(argv, "-m", a.cfg.Model)
	}
	argv = append(argv, a.cfg.Args...)
	return append(argv, "--prompt", req.Prompt)
}

// Run runs one iteration of Gemini CLI.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	env := a.cfg.Env
	if req.System != "" {
		name, err := cliagent.WriteTemp("ralph-gemini-system-*.md", req.System)
		if err != nil {
			return agent.Result{}, fmt.Errorf("gemini system prompt: %w", err)
		}
		defer os.Remove(name)
		env = append(append([]string(nil), env...), "GEMINI_SYSTEM_MD="+name)
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

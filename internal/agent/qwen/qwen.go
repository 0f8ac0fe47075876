// Package qwen runs Qwen Code (the qwen CLI, @qwen-code/qwen-code) as a
// ralph backend.
//
// Each iteration runs
//
//	qwen --output-format stream-json --approval-mode yolo
//	     [--append-system-prompt SYSTEM] [-m MODEL] [--max-session-turns N]
//	     [ARGS…] PROMPT
//
// in the workspace, and turns the stream-json lines into ralph events (see
// Parser).
//
// Qwen Code speaks to any OpenAI-compatible endpoint: give it one with
// [agents.qwen] args = ["--auth-type", "openai", "--openai-base-url", URL]
// and OPENAI_API_KEY in env (or Qwen Code's own settings.json).
//
// Permissions: --approval-mode yolo (every tool call approved: a headless
// run cannot ask) unless Config.PermissionMode names another approval
// mode. In yolo mode ralph sets QWEN_CODE_SUPPRESS_YOLO_WARNING=1: the
// choice is ralph's, and the warning would only fill the error log.
// Config.AllowedTools is ignored.
package qwen

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "qwen"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "qwen"

// InstallHint says how to install Qwen Code.
const InstallHint = "npm install -g @qwen-code/qwen-code"

// DefaultApprovalMode is the approval mode used when Config.PermissionMode
// is empty.
const DefaultApprovalMode = "yolo"

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".qwen"}}

// Agent is the Qwen Code backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns a Qwen Code backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured qwen program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	mode := a.Config.PermissionMode
	if mode == "" {
		mode = DefaultApprovalMode
	}
	argv := []string{a.Program(), "--output-format", "stream-json", "--approval-mode", mode}
	if req.System != "" {
		argv = append(argv, "--append-system-prompt", req.System)
	}
	if a.Config.Model != "" {
		argv = append(argv, "-m", a.Config.Model)
	}
	if a.Config.MaxTurns > 0 {
		argv = append(argv, "--max-session-turns", strconv.Itoa(a.Config.MaxTurns))
	}
	argv = append(argv, a.Config.Args...)
	return append(argv, req.Prompt)
}

// Run runs one iteration of Qwen Code.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	s := a.Spec(req, a.Args(req))
	if a.Config.PermissionMode == "" || a.Config.PermissionMode == "yolo" {
		s.Env = append([]string{"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}, s.Env...)
	}
	return cliagent.Run(ctx, a.Logger, s, NewParser(), emit)
}

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

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".gemini"}}

// Agent is the Gemini CLI backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns a Gemini CLI backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured gemini program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	mode := a.Config.PermissionMode
	if mode == "" {
		mode = DefaultApprovalMode
	}
	argv := []string{a.Program(), "--output-format", "stream-json", "--approval-mode", mode, "--skip-trust"}
	if a.Config.Model != "" {
		argv = append(argv, "-m", a.Config.Model)
	}
	argv = append(argv, a.Config.Args...)
	return append(argv, "--prompt", req.Prompt)
}

// Run runs one iteration of Gemini CLI.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	system, remove, err := cliagent.SystemFile(Name, req.System)
	if err != nil {
		return agent.Result{}, err
	}
	defer remove()
	s := a.Spec(req, a.Args(req))
	if system != "" {
		s.Read = []string{system}
	}
	if system != "" {
		s.Env = append(append([]string(nil), s.Env...), "GEMINI_SYSTEM_MD="+system)
	}
	return cliagent.Run(ctx, a.Logger, s, NewParser(), emit)
}

// Answers reports true: gemini --prompt answers a single question.
func (a *Agent) Answers() bool { return true }

// AnswerArgs returns the command line of a single question, program
// first: the default approval mode, in which a headless Gemini CLI runs
// no tool that needs approval.
func (a *Agent) AnswerArgs(user string) []string {
	argv := []string{a.Program(), "--output-format", "stream-json", "--approval-mode", "default", "--skip-trust"}
	if a.Config.Model != "" {
		argv = append(argv, "-m", a.Config.Model)
	}
	argv = append(argv, a.Config.Args...)
	return append(argv, "--prompt", user)
}

// Complete asks Gemini CLI one question and returns its final message. It
// runs in an empty temporary directory with the system prompt as
// GEMINI_SYSTEM_MD, so nothing of the workspace is read or written.
func (a *Agent) Complete(ctx context.Context, system, user string) (string, error) {
	dir, err := os.MkdirTemp("", "ralph-answer-")
	if err != nil {
		return "", fmt.Errorf("gemini answer: %w", err)
	}
	defer os.RemoveAll(dir)
	file, remove, err := cliagent.SystemFile(Name, system)
	if err != nil {
		return "", err
	}
	defer remove()
	s := a.Spec(agent.Request{Dir: dir}, a.AnswerArgs(user))
	if file != "" {
		s.Env = append(append([]string(nil), s.Env...), "GEMINI_SYSTEM_MD="+file)
	}
	res, err := cliagent.Run(ctx, a.Logger, s, NewParser(), nil)
	if err != nil {
		return "", err
	}
	return res.Final, nil
}

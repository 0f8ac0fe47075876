// Package claude runs Claude Code (the claude CLI) as a ralph backend.
//
// Each iteration runs
//
//	claude -p --output-format stream-json --verbose
//	       --append-system-prompt SYSTEM
//	       --permission-mode MODE --allowedTools TOOLS
//	       [--model MODEL] [--max-turns N] [ARGS…]
//
// in the workspace with the prompt on standard input, and turns the
// stream-json lines into ralph events (see Parser).
//
// A single question (Complete, the task parser's) runs
//
//	claude -p --output-format stream-json --verbose --system-prompt SYSTEM
//	       --tools "" --max-turns 1 [--model MODEL]
//
// in an empty temporary directory: no tools, one answer.
//
// Permissions: ralph runs the agent unattended, so by default it may edit
// files and run any command in the workspace without asking:
// --permission-mode acceptEdits with --allowedTools listing DefaultAllowedTools
// (Bash among them). It does not use --dangerously-skip-permissions, which
// Claude Code refuses when run as root, as CI is. Config.PermissionMode and
// Config.AllowedTools override both.
package claude

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "claude"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "claude"

// InstallHint says how to install Claude Code.
const InstallHint = "npm install -g @anthropic-ai/claude-code"

// DefaultPermissionMode is the permission mode used when
// Config.PermissionMode is empty: file edits are accepted without asking.
const DefaultPermissionMode = "acceptEdits"

// DefaultAllowedTools are the tools pre-approved when Config.AllowedTools
// is nil: everything a coding iteration needs, shell included.
var DefaultAllowedTools = []string{
	"Bash", "Edit", "MultiEdit", "Write", "Read", "Glob", "Grep", "LS",
	"NotebookEdit", "TodoWrite", "Task", "WebFetch", "WebSearch",
}

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".claude"}, StateFiles: []string{".claude.json", ".claude.json.backup"}}

// Agent is the Claude Code backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns a Claude Code backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured claude program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	mode := a.Config.PermissionMode
	if mode == "" {
		mode = DefaultPermissionMode
	}
	tools := a.Config.AllowedTools
	if tools == nil {
		tools = DefaultAllowedTools
	}
	argv := []string{a.Program(), "-p", "--output-format", "stream-json", "--verbose"}
	if req.System != "" {
		argv = append(argv, "--append-system-prompt", req.System)
	}
	argv = append(argv, "--permission-mode", mode)
	if len(tools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(tools, ","))
	}
	if a.Config.Model != "" {
		argv = append(argv, "--model", a.Config.Model)
	}
	if a.Config.MaxTurns > 0 {
		argv = append(argv, "--max-turns", strconv.Itoa(a.Config.MaxTurns))
	}
	return append(argv, a.Config.Args...)
}

// Run runs one iteration of Claude Code.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	s := a.Spec(req, a.Args(req))
	s.Stdin = req.Prompt
	return cliagent.Run(ctx, a.Logger, s, NewParser(), emit)
}

// Answers reports true: claude -p answers a single question.
func (a *Agent) Answers() bool { return true }

// AnswerArgs returns the command line of a single question, program
// first: the system prompt replaces Claude Code's own, and no tool is
// available.
func (a *Agent) AnswerArgs(system string) []string {
	argv := []string{a.Program(), "-p", "--output-format", "stream-json", "--verbose",
		"--system-prompt", system, "--tools", "", "--max-turns", "1"}
	if a.Config.Model != "" {
		argv = append(argv, "--model", a.Config.Model)
	}
	return append(argv, a.Config.Args...)
}

// Complete asks Claude Code one question in its non-interactive
// single-answer mode, without tools, and returns its final message. It
// runs in an empty temporary directory, so that nothing of the workspace
// is read or written.
func (a *Agent) Complete(ctx context.Context, system, user string) (string, error) {
	dir, err := os.MkdirTemp("", "ralph-answer-")
	if err != nil {
		return "", fmt.Errorf("claude answer: %w", err)
	}
	defer os.RemoveAll(dir)
	s := a.Spec(agent.Request{Dir: dir}, a.AnswerArgs(system))
	s.Stdin = user
	res, err := cliagent.Run(ctx, a.Logger, s, NewParser(), nil)
	if err != nil {
		return "", err
	}
	return res.Final, nil
}

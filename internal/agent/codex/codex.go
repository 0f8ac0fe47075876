// Package codex runs OpenAI's Codex CLI as a ralph backend.
//
// Each iteration runs
//
//	codex exec --json --skip-git-repo-check --sandbox workspace-write -C DIR
//	      [-m MODEL] [-c approval_policy="MODE"]
//	      [-c developer_instructions="SYSTEM"] [ARGS…] -
//
// with the prompt on standard input (the "-" argument), and turns the JSONL
// events into ralph events (see Parser).
//
// The system prompt: codex has no append-system-prompt flag. ralph passes
// its system prompt as the developer_instructions configuration value (a
// TOML string given with -c), which Codex 0.169 sends to the model as a
// developer message after its own base instructions — the same layering as
// Claude Code's --append-system-prompt. (model_instructions_file would
// replace Codex's base instructions, and with them its tool guidance.)
//
// Permissions: codex exec never asks for approval; commands run in the
// workspace-write sandbox (Config.Sandbox overrides it; Config.PermissionMode,
// when set, is passed as approval_policy). When ralph's own sandbox
// confines the call (Request.Sandbox), Codex's is left out
// (danger-full-access) unless Config.Sandbox names one: Codex builds its
// sandbox with namespaces and mounts, which a Landlock domain refuses, so
// every command and patch would fail; ralph's confinement holds for Codex
// and all it runs instead. Config.MaxTurns is ignored: codex
// has no turn limit.
//
// Cost: codex reports tokens only, so Usage.CostUSD is zero.
package codex

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "codex"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "codex"

// InstallHint says how to install Codex.
const InstallHint = "npm install -g @openai/codex"

// DefaultSandbox is the sandbox mode used when Config.Sandbox is empty.
const DefaultSandbox = "workspace-write"

// ConfinedSandbox is the sandbox mode used when Config.Sandbox is empty and
// ralph's own sandbox confines the call.
const ConfinedSandbox = "danger-full-access"

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".codex"}, StateVars: []string{"CODEX_HOME"}}

// Agent is the Codex backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns a Codex backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured codex program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	sandbox := a.Config.Sandbox
	switch {
	case sandbox != "":
	case req.Sandbox != nil && req.Sandbox.Mode != "off":
		sandbox = ConfinedSandbox
	default:
		sandbox = DefaultSandbox
	}
	argv := []string{a.Program(), "exec", "--json", "--skip-git-repo-check", "--sandbox", sandbox}
	if req.Dir != "" {
		argv = append(argv, "-C", req.Dir)
	}
	if a.Config.Model != "" {
		argv = append(argv, "-m", a.Config.Model)
	}
	if a.Config.PermissionMode != "" {
		argv = append(argv, "-c", "approval_policy="+TOMLString(a.Config.PermissionMode))
	}
	if req.System != "" {
		argv = append(argv, "-c", "developer_instructions="+TOMLString(req.System))
	}
	argv = append(argv, a.Config.Args...)
	return append(argv, "-")
}

// Run runs one iteration of Codex.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	s := a.Spec(req, a.Args(req))
	s.Stdin = req.Prompt
	return cliagent.Run(ctx, a.Logger, s, NewParser(), emit)
}

// TOMLString quotes s as a TOML basic string.
func TOMLString(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r < 0x20 || r == 0x7f:
			b = append(b, `\u00`...)
			h := strconv.FormatInt(int64(r), 16)
			if len(h) < 2 {
				h = "0" + h
			}
			b = append(b, h...)
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, '"'))
}

// Answers reports true: codex exec answers a single question.
func (a *Agent) Answers() bool { return true }

// AnswerArgs returns the command line of a single question in dir,
// program first: Codex's read-only sandbox, the system prompt as its
// developer instructions.
func (a *Agent) AnswerArgs(dir, system string) []string {
	argv := []string{a.Program(), "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "-C", dir}
	if a.Config.Model != "" {
		argv = append(argv, "-m", a.Config.Model)
	}
	argv = append(argv, "-c", "developer_instructions="+TOMLString(system))
	return append(append(argv, a.Config.Args...), "-")
}

// Complete asks Codex one question with codex exec and returns its final
// message. Codex has no mode without tools: it runs read-only in an empty
// temporary directory, so nothing of the workspace is read or written.
func (a *Agent) Complete(ctx context.Context, system, user string) (string, error) {
	dir, err := os.MkdirTemp("", "ralph-answer-")
	if err != nil {
		return "", fmt.Errorf("codex answer: %w", err)
	}
	defer os.RemoveAll(dir)
	s := a.Spec(agent.Request{Dir: dir}, a.AnswerArgs(dir, system))
	s.Stdin = user
	res, err := cliagent.Run(ctx, a.Logger, s, NewParser(), nil)
	if err != nil {
		return "", err
	}
	return res.Final, nil
}

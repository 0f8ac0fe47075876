// Package amp runs Sourcegraph's Amp CLI as a ralph backend.
//
// Each iteration runs
//
//	amp --execute PROMPT --stream-json --dangerously-allow-all [ARGS…]
//
// in the workspace. Amp's --stream-json speaks Claude Code's stream-json
// format, so the events are parsed by claude.Parser.
//
// Permissions: --dangerously-allow-all (Amp's only unattended mode) unless
// Config.PermissionMode is "ask", which leaves it off.
//
// The system prompt: Amp has no system-prompt option, so ralph's system
// prompt goes ahead of the prompt in a <system-instructions> block — the
// one backend where it travels as user text.
//
// Config.Model, Config.MaxTurns and Config.AllowedTools are ignored: Amp
// chooses its own model and has no turn limit or tool list flag.
//
// Untested offline (see Caveat): Amp runs its agent through Amp's own
// service, so no local fake model can drive it, and ralph's tests have
// never run the real amp. Its --stream-json is documented as Claude
// Code's format; the parser skips every line and event it does not know.
package amp

import (
	"context"
	"log/slog"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/claude"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "amp"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "amp"

// InstallHint says how to install Amp.
const InstallHint = "npm install -g @sourcegraph/amp"

// Caveat is what a user should know before choosing amp, for --help and
// diagnostics (ralph doctor) to print.
const Caveat = "amp needs Amp's own service (an ampcode.com account, online) and is untested offline"

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".config/amp", ".local/share/amp", ".cache/amp"}}

// Agent is the Amp backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns an Amp backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured amp program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	prompt := req.Prompt
	if req.System != "" {
		prompt = "<system-instructions>\n" + req.System + "\n</system-instructions>\n\n" + prompt
	}
	argv := []string{a.Program(), "--execute", prompt, "--stream-json"}
	if a.Config.PermissionMode != "ask" {
		argv = append(argv, "--dangerously-allow-all")
	}
	return append(argv, a.Config.Args...)
}

// Run runs one iteration of Amp.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	return cliagent.Run(ctx, a.Logger, a.Spec(req, a.Args(req)), claude.NewParser(), emit)
}

// Package opencode runs opencode as a ralph backend.
//
// Each iteration runs
//
//	opencode run --format json [--model PROVIDER/MODEL] [ARGS…] PROMPT
//
// in the workspace, and turns the JSON events into ralph events (see
// Parser).
//
// Configuration: ralph passes its part of opencode's configuration in
// OPENCODE_CONFIG_CONTENT, merged with the user's own (from
// [agents.opencode] env, else from ralph's environment): ralph's keys
// fill in, the user's win, and the "instructions" lists are joined. The
// user's provider, model and permission settings therefore survive.
//
// The system prompt: opencode has no append-system-prompt flag; its
// configuration's "instructions" list names files added to the system
// prompt. ralph writes its system prompt to a temporary file and adds it
// to that list.
//
// Permissions: opencode run cannot ask anyone, and an "ask" rule there
// ends the session as if the user had rejected it — silently, with exit
// status 0. ralph therefore sets every rule opencode leaves on "ask" to an
// explicit answer, so that a refused action is a tool error the model (and
// the store) sees and the run goes on: by default edits, commands and
// reads inside the workspace are allowed (opencode's defaults), and
// leaving the workspace (external_directory), a repeated identical call
// (doom_loop) and reading .env files are denied. Config.PermissionMode
// "allow" allows those too. A "permission" setting in the user's
// OPENCODE_CONFIG_CONTENT wins over ralph's.
//
// Config.MaxTurns and Config.AllowedTools are ignored.
package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "opencode"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "opencode"

// InstallHint says how to install opencode.
const InstallHint = "npm install -g opencode-ai"

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".config/opencode", ".local/share/opencode", ".local/state/opencode", ".cache/opencode"}}

// Agent is the opencode backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns an opencode backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured opencode program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first.
func (a *Agent) Args(req agent.Request) []string {
	argv := []string{a.Program(), "run", "--format", "json"}
	if a.Config.Model != "" {
		argv = append(argv, "--model", a.Config.Model)
	}
	argv = append(argv, a.Config.Args...)
	return append(argv, req.Prompt)
}

// ConfigVar is the variable that carries configuration to opencode.
const ConfigVar = "OPENCODE_CONFIG_CONTENT"

// Permission returns the permission rules ralph gives opencode for mode
// (Config.PermissionMode): an explicit answer for every rule opencode
// would otherwise "ask" about.
func Permission(mode string) map[string]any {
	if mode == "allow" {
		return map[string]any{"external_directory": "allow", "doom_loop": "allow", "read": "allow"}
	}
	return map[string]any{
		"external_directory": "deny",
		"doom_loop":          "deny",
		"read":               map[string]any{"*": "allow", "*.env": "deny", "*.env.*": "deny", "*.env.example": "allow"},
	}
}

// MergeConfig returns the configuration ralph passes: ralph's keys under
// the user's (user, a JSON object, may be empty), objects merged key by
// key with the user's values winning, the "instructions" lists joined
// (the user's first).
func MergeConfig(user string, ralph map[string]any) (string, error) {
	merged := map[string]any{}
	if strings.TrimSpace(user) != "" {
		if err := json.Unmarshal([]byte(user), &merged); err != nil {
			return "", fmt.Errorf("%s is not a JSON object: %w", ConfigVar, err)
		}
		if merged == nil { // "null" unmarshals to a nil map
			return "", fmt.Errorf("%s is not a JSON object: null", ConfigVar)
		}
	}
	merged = mergeUnder(merged, ralph)
	b, err := json.Marshal(merged)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// mergeUnder adds base's keys to over where over lacks them, merging
// nested objects the same way and joining "instructions" lists.
func mergeUnder(over, base map[string]any) map[string]any {
	for k, bv := range base {
		ov, ok := over[k]
		if !ok {
			over[k] = bv
			continue
		}
		switch o := ov.(type) {
		case map[string]any:
			if b, ok := bv.(map[string]any); ok {
				over[k] = mergeUnder(o, b)
			}
		case []any:
			if b, ok := bv.([]string); ok && k == "instructions" {
				for _, s := range b {
					o = append(o, s)
				}
				over[k] = o
			}
		}
	}
	return over
}

// env returns the environment of one run: cfg.Env without its
// OPENCODE_CONFIG_CONTENT, then the merged configuration.
func (a *Agent) env(system string) ([]string, error) {
	ralph := map[string]any{"permission": Permission(a.Config.PermissionMode)}
	if system != "" {
		ralph["instructions"] = []string{system}
	}
	content, err := MergeConfig(cliagent.LookupEnv(a.Config.Env, ConfigVar), ralph)
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range a.Config.Env {
		if !strings.HasPrefix(kv, ConfigVar+"=") {
			env = append(env, kv)
		}
	}
	return append(env, ConfigVar+"="+content), nil
}

// Run runs one iteration of opencode.
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
	if s.Env, err = a.env(system); err != nil {
		return agent.Result{}, fmt.Errorf("opencode: %w", err)
	}
	return cliagent.Run(ctx, a.Logger, s, NewParser(), emit)
}

// Package registry builds the agent backends that ralph.toml and the
// --agent flags name: one backend, or a fallback chain, checked to be
// available before a run starts.
package registry

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/amp"
	"github.com/ralph-harness/ralph/internal/agent/api"
	"github.com/ralph-harness/ralph/internal/agent/claude"
	"github.com/ralph-harness/ralph/internal/agent/codex"
	"github.com/ralph-harness/ralph/internal/agent/command"
	"github.com/ralph-harness/ralph/internal/agent/copilot"
	"github.com/ralph-harness/ralph/internal/agent/gemini"
	"github.com/ralph-harness/ralph/internal/agent/opencode"
	"github.com/ralph-harness/ralph/internal/agent/qwen"
	"github.com/ralph-harness/ralph/internal/agent/script"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Flags are the flags that choose and configure the agent.
type Flags struct {
	Name    string `json:"name,omitempty"`
	Script  string `json:"script,omitempty"`
	Command string `json:"command,omitempty"`
	Model   string `json:"model,omitempty"`
}

// BuildChain constructs the backends the flags and configuration name:
// the one to run first, and the fallback chain after it when the name is a
// comma-separated list ("claude,codex" from --agent, or a list in
// ralph.toml). Every backend of the chain must be available now.
func BuildChain(ws *workspace.Workspace, cfg config.Config, f Flags, logger *slog.Logger) (agent.Agent, []agent.Agent, error) {
	name := f.Name
	if name == "" {
		name = string(cfg.Agent)
	}
	if !strings.Contains(name, ",") {
		ag, err := Build(ws, cfg, f, logger)
		return ag, nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, n := range strings.Split(name, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case n == "auto":
			return nil, nil, failure.New(failure.Usage, fmt.Errorf("agent %q: auto cannot be part of a fallback chain; name the agents", name))
		case seen[n]:
			return nil, nil, failure.New(failure.Usage, fmt.Errorf("agent %q: %s is named twice", name, n))
		}
		seen[n] = true
		names = append(names, n)
	}
	var chain []agent.Agent
	for _, n := range names {
		g := f
		g.Name = n
		ag, err := Build(ws, cfg, g, logger)
		if err != nil {
			return nil, nil, err
		}
		chain = append(chain, ag)
	}
	if len(chain) == 0 {
		return nil, nil, failure.New(failure.Usage, fmt.Errorf("agent %q names no agent", name))
	}
	return chain[0], chain[1:], nil
}

// Build constructs the backend the flags and configuration name.
func Build(ws *workspace.Workspace, cfg config.Config, f Flags, logger *slog.Logger) (agent.Agent, error) {
	name := f.Name
	if name == "" {
		name = string(cfg.Agent)
	}
	if f.Script != "" && (name == "" || name == "auto") {
		name = "script"
	}
	backend := cfg.Agents[name]
	switch name {
	case "script":
		if f.Script == "" {
			return nil, failure.New(failure.Usage, errors.New("--agent script needs --script FILE"))
		}
		path := f.Script
		if !filepath.IsAbs(path) {
			if _, err := os.Stat(path); err != nil {
				path = filepath.Join(ws.Root, path)
			}
		}
		s, err := script.Load(path)
		if err != nil {
			return nil, failure.New(failure.Usage, err)
		}
		return script.New(s), nil
	case "command":
		argv := backend.Command
		if f.Command != "" {
			argv = strings.Fields(f.Command)
		}
		if len(argv) == 0 {
			return nil, failure.New(failure.Usage, errors.New("--agent command needs --command PROGRAM or [agents.command] command = [argv…] in ralph.toml"))
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			return nil, failure.New(engine.AgentError, fmt.Errorf("%w: %s is not on PATH", agent.ErrNotFound, argv[0]))
		}
		return command.New(argv, backend.Env, ws.Path(workspace.Logs)), nil
	case "api":
		a, err := api.New(APIConfig(cfg, backend, f), logger)
		if err != nil {
			return nil, failure.New(engine.AgentError, fmt.Errorf("%v (set ANTHROPIC_API_KEY or OPENAI_API_KEY, or [agents.api] in ralph.toml)", err))
		}
		return a, nil
	case "auto", "":
		for _, b := range CLIs {
			if b.Available(Config(cfg, cfg.Agents[b.Name], f)) {
				return Build(ws, cfg, Flags{Name: b.Name, Model: f.Model}, logger)
			}
		}
		if _, err := api.New(APIConfig(cfg, cfg.Agents["api"], f), logger); err == nil {
			return Build(ws, cfg, Flags{Name: "api", Model: f.Model}, logger)
		}
		return nil, failure.New(engine.AgentError, errors.New("no agent available: install Claude Code (npm install -g @anthropic-ai/claude-code) or Codex (npm install -g @openai/codex), set ANTHROPIC_API_KEY or OPENAI_API_KEY for the built-in api agent, or pass --agent script --script FILE"))
	}
	for _, b := range CLIs {
		if b.Name != name {
			continue
		}
		ac := Config(cfg, backend, f)
		if !b.Available(ac) {
			bin := ac.Binary
			if bin == "" {
				bin = b.Binary
			}
			return nil, failure.New(engine.AgentError, fmt.Errorf("%w: %s is not on PATH (install it: %s)", agent.ErrNotFound, bin, b.Hint))
		}
		return b.New(ac, logger), nil
	}
	return nil, failure.New(failure.Usage, fmt.Errorf("unknown agent %q (want auto, claude, codex, opencode, gemini, qwen, copilot, amp, api, command or script)", name))
}

// CLI is an agent CLI ralph can drive.
type CLI struct {
	// Name is the backend's --agent name, Binary its default program,
	// Hint how to install it.
	Name, Binary, Hint string
	// Available says whether the program is on PATH.
	Available func(agent.Config) bool
	// New builds the backend.
	New func(agent.Config, *slog.Logger) agent.Agent
}

// CLIs are the agent CLIs in the order --agent auto tries them.
var CLIs = []CLI{
	{claude.Name, claude.DefaultBinary, claude.InstallHint, claude.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return claude.New(c, l) }},
	{codex.Name, codex.DefaultBinary, codex.InstallHint, codex.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return codex.New(c, l) }},
	{opencode.Name, opencode.DefaultBinary, opencode.InstallHint, opencode.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return opencode.New(c, l) }},
	{gemini.Name, gemini.DefaultBinary, gemini.InstallHint, gemini.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return gemini.New(c, l) }},
	{qwen.Name, qwen.DefaultBinary, qwen.InstallHint, qwen.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return qwen.New(c, l) }},
	{copilot.Name, copilot.DefaultBinary, copilot.InstallHint, copilot.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return copilot.New(c, l) }},
	{amp.Name, amp.DefaultBinary, amp.InstallHint, amp.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return amp.New(c, l) }},
}

// Config merges ralph.toml's [agents.NAME] table and the flags;
// the model is --model, else [agents.NAME] model, else the top-level one.
func Config(cfg config.Config, b config.Backend, f Flags) agent.Config {
	return agent.Config{
		Binary:         b.Binary,
		Args:           b.Args,
		Model:          cmp.Or(f.Model, b.Model, cfg.Model),
		Env:            b.Env,
		MaxTurns:       b.MaxTurns,
		PermissionMode: b.PermissionMode,
	}
}

// APIConfig configures the built-in api agent from [agents.api] and flags.
func APIConfig(cfg config.Config, b config.Backend, f Flags) api.Config {
	return api.Config{Provider: b.Provider, Model: cmp.Or(f.Model, b.Model, cfg.Model), BaseURL: b.BaseURL, APIKeyEnv: b.APIKeyEnv, MaxTurns: b.MaxTurns, Stylesheet: cfg.Theme.Stylesheet}
}

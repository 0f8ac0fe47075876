package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

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
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/mergequeue"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// usageError is a mistake in how ralph was invoked or configured: exit 2.
func usageError(err error) error { return failure.New(failure.Usage, err) }

// openWorkspace finds the workspace and reads its configuration.
func openWorkspace(ctx context.Context, g *Globals) (*workspace.Workspace, config.Config, error) {
	return session.OpenWorkspace(ctx, g)
}

// openStore opens the workspace's database, creating .ralph/ if needed.
func openStore(ctx context.Context, ws *workspace.Workspace) (*store.Store, error) {
	return session.OpenStore(ctx, ws)
}

// openRunStore opens the workspace and the database a run created; see
// session.OpenRunStore.
func openRunStore(ctx context.Context, g *Globals) (*workspace.Workspace, *store.Store, error) {
	return session.OpenRunStore(ctx, g)
}

// agentFlags are the flags that choose and configure the agent.
type agentFlags struct {
	Name    string `json:"name,omitempty"`
	Script  string `json:"script,omitempty"`
	Command string `json:"command,omitempty"`
	Model   string `json:"model,omitempty"`
}

// buildAgents constructs the backends the flags and configuration name:
// the one to run first, and the fallback chain after it when the name is a
// comma-separated list ("claude,codex" from --agent, or a list in
// ralph.toml). Every backend of the chain must be available now.
func buildAgents(ws *workspace.Workspace, cfg config.Config, f agentFlags, logger *slog.Logger) (agent.Agent, []agent.Agent, error) {
	name := f.Name
	if name == "" {
		name = string(cfg.Agent)
	}
	if !strings.Contains(name, ",") {
		ag, err := buildAgent(ws, cfg, f, logger)
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
			return nil, nil, usageError(fmt.Errorf("agent %q: auto cannot be part of a fallback chain; name the agents", name))
		case seen[n]:
			return nil, nil, usageError(fmt.Errorf("agent %q: %s is named twice", name, n))
		}
		seen[n] = true
		names = append(names, n)
	}
	var chain []agent.Agent
	for _, n := range names {
		g := f
		g.Name = n
		ag, err := buildAgent(ws, cfg, g, logger)
		if err != nil {
			return nil, nil, err
		}
		chain = append(chain, ag)
	}
	if len(chain) == 0 {
		return nil, nil, usageError(fmt.Errorf("agent %q names no agent", name))
	}
	return chain[0], chain[1:], nil
}

// buildAgent constructs the backend the flags and configuration name.
func buildAgent(ws *workspace.Workspace, cfg config.Config, f agentFlags, logger *slog.Logger) (agent.Agent, error) {
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
			return nil, usageError(errors.New("--agent script needs --script FILE"))
		}
		path := f.Script
		if !filepath.IsAbs(path) {
			if _, err := os.Stat(path); err != nil {
				path = filepath.Join(ws.Root, path)
			}
		}
		s, err := script.Load(path)
		if err != nil {
			return nil, usageError(err)
		}
		return script.New(s), nil
	case "command":
		argv := backend.Command
		if f.Command != "" {
			argv = strings.Fields(f.Command)
		}
		if len(argv) == 0 {
			return nil, usageError(errors.New("--agent command needs --command PROGRAM or [agents.command] command = [argv…] in ralph.toml"))
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			return nil, failure.New(engine.AgentError, fmt.Errorf("%w: %s is not on PATH", agent.ErrNotFound, argv[0]))
		}
		return command.New(argv, backend.Env, ws.Path(workspace.Logs)), nil
	case "api":
		a, err := api.New(apiConfig(cfg, backend, f), logger)
		if err != nil {
			return nil, failure.New(engine.AgentError, fmt.Errorf("%v (set ANTHROPIC_API_KEY or OPENAI_API_KEY, or [agents.api] in ralph.toml)", err))
		}
		return a, nil
	case "auto", "":
		for _, b := range cliBackends {
			if b.available(backendConfig(cfg, cfg.Agents[b.name], f)) {
				return buildAgent(ws, cfg, agentFlags{Name: b.name, Model: f.Model}, logger)
			}
		}
		if _, err := api.New(apiConfig(cfg, cfg.Agents["api"], f), logger); err == nil {
			return buildAgent(ws, cfg, agentFlags{Name: "api", Model: f.Model}, logger)
		}
		return nil, failure.New(engine.AgentError, errors.New("no agent available: install Claude Code (npm install -g @anthropic-ai/claude-code) or Codex (npm install -g @openai/codex), set ANTHROPIC_API_KEY or OPENAI_API_KEY for the built-in api agent, or pass --agent script --script FILE"))
	}
	for _, b := range cliBackends {
		if b.name != name {
			continue
		}
		ac := backendConfig(cfg, backend, f)
		if !b.available(ac) {
			bin := ac.Binary
			if bin == "" {
				bin = b.binary
			}
			return nil, failure.New(engine.AgentError, fmt.Errorf("%w: %s is not on PATH (install it: %s)", agent.ErrNotFound, bin, b.hint))
		}
		return b.build(ac, logger), nil
	}
	return nil, usageError(fmt.Errorf("unknown agent %q (want auto, claude, codex, opencode, gemini, qwen, copilot, amp, api, command or script)", name))
}

// cliBackend is an agent CLI ralph can drive.
type cliBackend struct {
	name, binary, hint string
	available          func(agent.Config) bool
	build              func(agent.Config, *slog.Logger) agent.Agent
}

// cliBackends are the agent CLIs in the order --agent auto tries them.
var cliBackends = []cliBackend{
	{claude.Name, claude.DefaultBinary, claude.InstallHint, claude.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return claude.New(c, l) }},
	{codex.Name, codex.DefaultBinary, codex.InstallHint, codex.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return codex.New(c, l) }},
	{opencode.Name, opencode.DefaultBinary, opencode.InstallHint, opencode.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return opencode.New(c, l) }},
	{gemini.Name, gemini.DefaultBinary, gemini.InstallHint, gemini.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return gemini.New(c, l) }},
	{qwen.Name, qwen.DefaultBinary, qwen.InstallHint, qwen.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return qwen.New(c, l) }},
	{copilot.Name, copilot.DefaultBinary, copilot.InstallHint, copilot.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return copilot.New(c, l) }},
	{amp.Name, amp.DefaultBinary, amp.InstallHint, amp.Available, func(c agent.Config, l *slog.Logger) agent.Agent { return amp.New(c, l) }},
}

// backendConfig merges ralph.toml's [agents.NAME] table and the flags;
// the model is --model, else [agents.NAME] model, else the top-level one.
func backendConfig(cfg config.Config, b config.Backend, f agentFlags) agent.Config {
	return agent.Config{
		Binary:         b.Binary,
		Args:           b.Args,
		Model:          cmp.Or(f.Model, b.Model, cfg.Model),
		Env:            b.Env,
		MaxTurns:       b.MaxTurns,
		PermissionMode: b.PermissionMode,
	}
}

// apiConfig configures the built-in api agent from [agents.api] and flags.
func apiConfig(cfg config.Config, b config.Backend, f agentFlags) api.Config {
	return api.Config{Provider: b.Provider, Model: cmp.Or(f.Model, b.Model, cfg.Model), BaseURL: b.BaseURL, APIKeyEnv: b.APIKeyEnv, MaxTurns: b.MaxTurns, Stylesheet: cfg.Theme.Stylesheet}
}

// taskParser returns the parser that writes task.md: Option A through the
// api agent's model when [task] parser asks for it (or, on auto, when the
// run uses the api agent or ralph.toml configures it), else the template.
func taskParser(cfg config.Config, ag agent.Agent, logger *slog.Logger) *task.Parser {
	p := &task.Parser{Logger: logger}
	_, configured := cfg.Agents["api"]
	switch cfg.Task.Parser {
	case "template":
		return p
	case "", "auto":
		if ag.Name() != "api" && !configured {
			return p
		}
	}
	m, err := api.NewModel(apiConfig(cfg, cfg.Agents["api"], agentFlags{}), logger)
	if err != nil {
		logger.Warn("task parser: no model, using the template", "err", err)
		return p
	}
	p.Model = m
	return p
}

// touchedBy finds the file the current task's tool calls touched for a
// plan section, for the scope gate when a section's file is not known.
func touchedBy(st *store.Store) func(*plan.Node) string {
	return func(section *plan.Node) string {
		ctx := context.Background()
		t, err := st.LatestTask(ctx)
		if err != nil {
			return ""
		}
		evs, err := st.EventsAfter(ctx, t.ID, 0, 1<<20)
		if err != nil {
			return ""
		}
		var paths []string
		for _, e := range evs {
			if e.Kind == string(agent.KindToolCall) && e.Data != "" {
				paths = append(paths, stall.InputPaths(json.RawMessage(e.Data))...)
			}
		}
		return gate.TouchedFile(paths, section)
	}
}

// buildGates returns the gates of a run (see gate.FromConfig).
func buildGates(cfg config.Config, logger *slog.Logger) []gate.Gate {
	return gate.FromConfig(cfg, logger)
}

// specGates are the gates of a spec and of landing (see gate.ForSpecs).
func specGates(cfg config.Config) []gate.Gate { return gate.ForSpecs(cfg) }

// landingGates runs gates on a rebased branch for the merge queue.
func landingGates(gates []gate.Gate) mergequeue.Gates { return gate.Landing(gates) }

// engineOptions wires an engine from configuration.
func engineOptions(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config, ag agent.Agent) (engine.Options, error) {
	snaps, err := snapshot.Open(ctx, ws.Root, g.Logger)
	if err != nil {
		return engine.Options{}, fmt.Errorf("open snapshots: %w", err)
	}
	lib, err := recipe.Load(ctx, ws.Root)
	if err != nil {
		// A malformed recipe in .ralph/recipes: say so, and run with the
		// embedded library rather than refuse to run.
		fmt.Fprintf(g.Stderr, "ralph: warning: %v (using the embedded recipes)\n", err)
		lib, _ = recipe.Embedded()
	}
	opt := engine.Options{
		Agent:   ag,
		Gates:   buildGates(cfg, g.Logger),
		Promise: cfg.Promise,
		Limits: engine.Limits{
			MaxIterations:    cfg.Limits.MaxIterations,
			MaxDuration:      cfg.Limits.MaxDuration.Duration,
			MaxCost:          cfg.Limits.MaxCost,
			IterationTimeout: cfg.Limits.IterationTimeout.Duration,
			IdleTimeout:      cfg.Limits.IdleTimeout.Duration,
			GateFailures:     cfg.Limits.GateFailures,
			MaxWait:          cfg.Limits.MaxWait.Duration,
		},
		Stall: stall.Config{
			RepeatThreshold:        cfg.Stall.Repeat,
			NoProgressThreshold:    cfg.Stall.NoProgress,
			RepeatedErrorThreshold: cfg.Stall.RepeatedErrors,
		},
		Registries: plancontext.Registries(lib),
		PlanContext: func(ctx context.Context, root *plan.Node) string {
			c := plancontext.Resolve(ctx, root, plancontext.Options{
				Dir: ws.Root, Stylesheet: cfg.Theme.Stylesheet, Recipes: lib, Logger: g.Logger})
			// The notes the agent gets are worth the user's eye too: they
			// show as warning lines of the run's progress.
			for _, w := range c.Warnings {
				g.Logger.Warn(strings.TrimSuffix(w, "."), "component", "plancontext")
			}
			return plancontext.Format(c)
		},
		Snapshots:  snaps,
		TaskParser: taskParser(cfg, ag, g.Logger),
		Logger:     g.Logger,
	}
	// The scope gate compares marked sections with their task-N-pre state.
	opt.Gates = append(opt.Gates, &gate.Scope{Snapshots: snaps, Touched: touchedBy(st)})
	if len(cfg.Notify) > 0 {
		argv := cfg.Notify
		opt.Notify = func(ctx context.Context, msg string) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if _, err := proc.Run(ctx, proc.Spec{Argv: append(append([]string(nil), argv...), msg), Dir: ws.Root}); err != nil {
				g.Logger.Warn("notify", "err", err)
			}
		}
	}
	return opt, nil
}

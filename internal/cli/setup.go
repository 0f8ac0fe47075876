package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/registry"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// usageError is a mistake in how ralph was invoked or configured: exit 2.
func usageError(err error) error { return failure.New(failure.Usage, err) }

// openWorkspace finds the workspace and reads its configuration.
func openWorkspace(ctx context.Context, g *Globals) (*workspace.Workspace, config.Config, error) {
	return session.OpenWorkspace(ctx, g)
}

// openRunStore opens the workspace and the database a run created; see
// session.OpenRunStore.
func openRunStore(ctx context.Context, g *Globals) (*workspace.Workspace, *store.Store, error) {
	return session.OpenRunStore(ctx, g)
}

// agentFlags are the flags that choose and configure the agent.
type agentFlags = registry.Flags

// buildAgents constructs the agent and its fallback chain (see
// registry.BuildChain).
func buildAgents(ws *workspace.Workspace, cfg config.Config, f agentFlags, logger *slog.Logger) (agent.Agent, []agent.Agent, error) {
	return registry.BuildChain(ws, cfg, f, logger)
}

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
	sb, err := session.Sandbox(g, cfg)
	if err != nil {
		return engine.Options{}, err
	}
	opt := engine.Options{
		Sandbox:    sb,
		Agent:      ag,
		Gates:      gate.FromConfig(cfg, g.Logger),
		Promise:    cfg.Promise,
		Guard:      engine.Guard{Protect: cfg.Guard.Protect, OnChange: cfg.Guard.OnChange, Timeout: cfg.Guard.Timeout.Duration},
		Limits:     engine.LimitsFrom(cfg.Limits),
		Stall:      stall.ConfigFrom(cfg.Stall),
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
		TaskParser: registry.TaskParser(cfg, ag, g.Logger),
		Logger:     g.Logger,
	}
	// The scope gate compares marked sections with their task-N-pre state.
	opt.Gates = append(opt.Gates, &gate.Scope{Snapshots: snaps, Touched: gate.TouchedBy(st)})
	opt.Notify = session.NotifyCommand(g, ws.Root, cfg.Notify.Command)
	return opt, nil
}

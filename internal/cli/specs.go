package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/registry"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/status"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// SpecsRunOptions are the flags of ralph specs run.
type SpecsRunOptions struct {
	agent             agentFlags
	plannerScript     string
	implementerScript string
	verifierScript    string
	only              string
	force             bool
	maxAttempts       int
	parallel          int
	maxCost           float64
	// stepResult: run one step of the one spec selected and write its
	// spec.StepReport here as JSON (a Temporal worker's activity).
	stepResult string
}

// AddFlags registers the flags on cmd.
func (o *SpecsRunOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.agent.Name, "agent", "", "agent `NAME` for all three roles (default from ralph.toml, else auto)")
	f.StringVar(&o.agent.Script, "script", "", "script `FILE` for --agent script, for every role without its own script")
	f.StringVar(&o.plannerScript, "planner-script", "", "script `FILE` the planner plays (default --script)")
	f.StringVar(&o.implementerScript, "implementer-script", "", "script `FILE` the implementer plays (default --script)")
	f.StringVar(&o.verifierScript, "verifier-script", "", "script `FILE` the verifier plays (default --script)")
	f.StringVar(&o.agent.Command, "command", "", "program for --agent command, split on spaces (no shell); the prompt arrives on stdin")
	f.StringVar(&o.agent.Model, "model", "", "model for agents that choose one")
	f.StringVar(&o.only, "only", "", "run only the spec `REL` (path relative to DIR, .md optional) or the specs under folder REL")
	f.BoolVar(&o.force, "force", false, "run specs that are done again (their active plan is kept)")
	f.IntVar(&o.maxAttempts, "max-attempts", 0, "failed attempts allowed per spec (default 3, or [specs] max_attempts)")
	f.IntVar(&o.parallel, "parallel", 0, "run up to `N` specs at once, each in its own git worktree, landing through a merge queue (default 1, or [specs] parallel)")
	f.Float64Var(&o.maxCost, "max-cost", 0, "stop the whole run once all specs together cost `USD` dollars (default: no cap)")
	f.StringVar(&o.stepResult, "step-result", "", "run one step of the one spec --only selects and write what it did to `FILE` as JSON")
	_ = f.MarkHidden("step-result")
}

func newSpecsCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "specs",
		Short: "Run a folder of specs through plan → implement → verify",
		Long: `Run every spec (*.md) in a folder through three fresh agent calls each: a
planner writes a plan, an implementer follows it and commits, a verifier
checks the commit against the spec. State lives next to the specs in
plans/, candidates/ and done/, so a run that stops resumes where it was.`,
	}
	cmd.AddCommand(newSpecsRunCommand(g), newSpecsStatusCommand(g))
	return cmd
}

func newSpecsRunCommand(g *Globals) *cobra.Command {
	var o SpecsRunOptions
	cmd := &cobra.Command{
		Use:   "run [DIR]",
		Short: "Plan, implement and verify every spec in DIR (default specs/)",
		Long: `Run every *.md spec in DIR (default: [specs] dir in ralph.toml, else specs/),
nested folders included, in path order. For each spec:

  plan       the planner reads the spec, the paths, SCRATCHPAD.md and, when
             re-planning, the old plan and why it was rejected; it writes
             DIR/plans/<rel>.md and ends its final message with the planner
             phrase. It may change nothing but DIR/plans/ and SCRATCHPAD.md:
             anything else fails the attempt and is reverted from a snapshot.
  implement  the implementer gets the plan, commits (HEAD must move) and ends
             with the implementer phrase; the gates of ralph.toml must pass;
             then DIR/candidates/<rel>.json is recorded.
  verify     the verifier gets the spec, the plan and the diff and ends with
             <promise>PASS</promise> (DIR/done/<rel>.md is written) or
             <promise>FAIL</promise>: a "PLAN_INVALIDATION: <reason>" line
             archives the plan as <rel>.attempt-N.md and re-plans; any other
             failure re-implements with the report as feedback.

A spec gives up after max_attempts failed attempts of any kind (default 3),
waiting [specs] backoff before each retry. Done specs are skipped unless
--force. An active plan is never re-planned: a run killed while
implementing or verifying resumes there. A plan .md written by hand without
a .json is used as it is.

Each role is a fresh agent call whose iteration number is that role's
attempt number for the spec; with --agent script, give each role its own
script (--planner-script, --implementer-script, --verifier-script; each
falls back to --script), where entry k is the role's k-th attempt.

Agent output goes to .ralph/logs/specs/runs/<spec_id>/<timestamp>/
(plan-attempt-N.log, impl-attempt-N.log, verify.log), inside .ralph/logs/ so
git ignores it and no agent commits it.

With --parallel N (or [specs] parallel = N), up to N specs run at once,
each in its own git worktree .ralph/worktrees/<id> on branch
ralph/spec/<id>, started from the commit the run began on; the agents work
in the worktree and never see the others. A spec that is done goes through
the merge queue: rebased onto the current tip of the branch the run started
on, the gates run again on the result, then that branch is fast-forwarded
(the history stays linear). A conflict, or gates failing after the rebase,
sends the spec back to its implementer once on the new tip with the
conflict as feedback; if it still cannot land it ends "conflict" with its
branch kept (ralph specs status says what to do). The specs must be
committed. Your working tree follows each landing by fast-forward (git
merge --ff-only): your uncommitted and untracked changes are carried along
untouched; when a landing would overwrite one of them it waits, says so,
and lands once you commit or stash it. Run the same command again after
Ctrl-C or a crash: every unfinished spec resumes in its worktree.

Exit codes: 0 every spec is done, 1 some spec failed or could not land
(listed at the end with its reason), 2 usage or configuration error,
5 --max-cost reached, 10 an agent could not run, 130 interrupted (run again
to resume).`,
		Example: `  ralph specs run
  ralph specs run --only area/0002-bar specs/
  ralph specs run --parallel 3
  ralph specs run --planner-script p.json --implementer-script i.json --verifier-script v.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			// Set, --parallel and --max-attempts must be 1 or more.
			least := func(name string, v int) config.Bound {
				if cmd.Flags().Changed(name[2:]) {
					return config.AtLeastOne(name, v)
				}
				return config.Int(name, v)
			}
			if err := config.CheckBounds(least("--parallel", o.parallel), least("--max-attempts", o.maxAttempts), config.Float("--max-cost", o.maxCost)); err != nil {
				return usageError(err)
			}
			return runSpecs(cmd.Context(), g, &o, dir)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// specsLayout resolves DIR: an argument is relative to --dir, the
// configured folder to the workspace root.
func specsLayout(g *Globals, ws *workspace.Workspace, cfg config.Config, dir string) (spec.Layout, error) {
	if dir == "" {
		dir = filepath.Join(ws.Root, cfg.Specs.Dir)
	} else if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(filepath.Join(g.Dir, dir))
		if err != nil {
			return spec.Layout{}, err
		}
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	l, err := spec.NewLayout(ws.Root, dir)
	if err != nil {
		return spec.Layout{}, usageError(err)
	}
	return l, nil
}

func runSpecs(ctx context.Context, g *Globals, o *SpecsRunOptions, dir string) error {
	ws, cfg, err := openWorkspace(ctx, g)
	if err != nil {
		return err
	}
	if o.agent.Model != "" {
		cfg.Model = o.agent.Model
	}
	if o.maxAttempts > 0 {
		cfg.Specs.MaxAttempts = o.maxAttempts
	}
	if o.parallel > 0 {
		cfg.Specs.Parallel = o.parallel
	}
	if o.maxCost > 0 {
		cfg.Limits.MaxCost = o.maxCost
	}
	layout, err := specsLayout(g, ws, cfg, dir)
	if err != nil {
		return err
	}
	specs, err := layout.Discover()
	if err == nil {
		specs, err = spec.Select(specs, o.only)
	}
	if err == nil && len(specs) == 0 {
		err = fmt.Errorf("%w in %s", spec.ErrNoSpecs, layout.Dir)
	}
	if err != nil {
		return usageError(err)
	}
	roles := map[spec.Role]string{spec.Planner: o.plannerScript, spec.Implementer: o.implementerScript, spec.Verifier: o.verifierScript}
	agents := map[spec.Role]agent.Agent{}
	for role, script := range roles {
		f := o.agent
		if script != "" {
			f.Script = script
		}
		ag, err := registry.Build(ws, cfg, f, g.Logger)
		if err != nil {
			return fmt.Errorf("%s: %w", role, err)
		}
		agents[role] = ag
	}

	lock, err := ws.Lock()
	if err != nil {
		return failure.New(failure.Failed, err)
	}
	defer lock.Release()
	st, err := startRunStore(ctx, g, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx = engine.RecordProcGroups(ctx, st, nil, func(argv0, note string) {
		fmt.Fprintf(g.Stderr, "ralph: a process escaped: %s: %s\n", argv0, note)
	}, nil)
	snaps, err := snapshot.Open(ctx, ws.Root, g.Logger)
	if err != nil {
		return fmt.Errorf("open snapshots: %w", err)
	}
	sb, err := session.Sandbox(g, cfg)
	if err != nil {
		return err
	}
	p := spec.New(spec.Options{
		Sandbox:      sb,
		Layout:       layout,
		Planner:      agents[spec.Planner],
		Implementer:  agents[spec.Implementer],
		Verifier:     agents[spec.Verifier],
		Gates:        gate.ForSpecs(cfg),
		Snapshots:    snaps,
		Records:      st,
		Humans:       st,
		Phrases:      spec.PhrasesFrom(cfg.Specs),
		MaxAttempts:  cfg.Specs.MaxAttempts,
		Backoff:      cfg.Specs.Backoff.Duration,
		AgentTimeout: cfg.Limits.IterationTimeout.Duration,
		IdleTimeout:  cfg.Limits.IdleTimeout.Duration,
		MaxWait:      cfg.Limits.MaxWait.Duration,
		LogDir:       filepath.Join(ws.Path(workspace.Logs), "specs"),
		Force:        o.force,
		Progress:     g.Stdout,
		Logger:       g.Logger,
	})
	if o.stepResult != "" {
		return runSpecStep(ctx, p, specs, o.stepResult)
	}
	var rep spec.Report
	var runErr error
	if cfg.Specs.Parallel > 1 {
		rep, runErr = runSpecsParallel(ctx, g, cfg, ws, layout, specs, p)
	} else {
		rep, runErr = p.Run(ctx, specs)
	}
	status.PrintSpecsSummary(g.Stdout, rep)
	switch {
	case runErr == nil:
	case errors.Is(runErr, spec.ErrMaxCost):
		return failure.New(engine.MaxCost, fmt.Errorf("%w (run ralph specs run again with a higher --max-cost to go on)", runErr))
	case errors.Is(runErr, errParallelUsage):
		return usageError(runErr)
	case ctx.Err() != nil:
		return failure.New(engine.Interrupted, fmt.Errorf("interrupted (run ralph specs run again to resume): %w", runErr))
	case errors.Is(runErr, spec.ErrAgentUnavailable):
		return failure.New(engine.AgentError, runErr)
	default:
		return runErr
	}
	if n := len(rep.Failed()); n > 0 {
		return failure.New(failure.Failed, fmt.Errorf("%d of %d specs failed", n, len(rep.Results)))
	}
	if n := len(rep.Conflicts()); n > 0 {
		return failure.New(failure.Failed, fmt.Errorf("%d of %d specs could not land", n, len(rep.Results)))
	}
	return nil
}

// runSpecStep runs the one step the one spec is at and writes the report
// to path.
func runSpecStep(ctx context.Context, p *spec.Pipeline, specs []spec.Spec, path string) error {
	if len(specs) != 1 {
		return usageError(fmt.Errorf("--step-result needs exactly one spec (--only), not %d", len(specs)))
	}
	rep, err := p.Step(ctx, specs[0])
	if err != nil {
		if errors.Is(err, spec.ErrAgentUnavailable) {
			return failure.New(engine.AgentError, err)
		}
		return err
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return workspace.WriteFile(path, data)
}

func newSpecsStatusCommand(g *Globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [DIR]",
		Short: "Show where every spec in DIR stands",
		Long: `Show every spec in DIR (default specs/) with its state (new, planned,
invalidated, candidate, done, failed, or the step a running pipeline is
in), its plan attempt, its implementation attempts, the last result and the
agents' cost. The files in DIR decide the state; the store adds the rest.
Works while a run is going.

After a parallel run (ralph specs run --parallel N), a spec still in its
worktree is read from there and listed below the table with its worktree
and branch; "landing" is done and waiting in the merge queue; "conflict"
could not land, and the line below the table says what to do.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, _, layout, err := openSpecsLayout(ctx, g, args)
			if err != nil {
				return err
			}
			rows, err := status.SpecRows(ctx, ws, layout)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(g.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(g.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SPEC\tSTATE\tPLAN\tIMPL\tLAST RESULT\tCOST")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t$%.2f\n", r.Spec, r.State, r.PlanAttempt, r.ImplAttempts, progress.OneLine(r.LastResult, 70), r.CostUSD)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, r := range rows {
				switch {
				case r.State == spec.StateConflict:
					fmt.Fprintf(g.Stdout, "%s: could not land: %s\n", r.Spec, r.LastResult)
				case r.Worktree != "" && r.State != spec.StateDone:
					fmt.Fprintf(g.Stdout, "%s: in worktree %s (branch %s)\n", r.Spec, r.Worktree, r.Branch)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	return cmd
}

// openSpecsLayout opens the workspace and the specs layout of the
// optional directory argument.
func openSpecsLayout(ctx context.Context, g *Globals, args []string) (*workspace.Workspace, config.Config, spec.Layout, error) {
	ws, cfg, err := openWorkspace(ctx, g)
	if err != nil {
		return nil, config.Config{}, spec.Layout{}, err
	}
	dir := ""
	if len(args) == 1 {
		dir = args[0]
	}
	layout, err := specsLayout(g, ws, cfg, dir)
	if err != nil {
		return nil, config.Config{}, spec.Layout{}, err
	}
	return ws, cfg, layout, nil
}

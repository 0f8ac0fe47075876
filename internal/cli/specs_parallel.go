package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/mergequeue"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// errParallelUsage marks a parallel run that cannot start as asked.
var errParallelUsage = errors.New("cannot run specs in parallel")

// runSpecsParallel runs the specs cfg.Specs.Parallel at a time in git
// worktrees and lands them on the current branch through a merge queue.
func runSpecsParallel(ctx context.Context, g *Globals, cfg config.Config, ws *workspace.Workspace, layout spec.Layout, specs []spec.Spec, p *spec.Pipeline) (spec.Report, error) {
	target, err := git.Line(ctx, ws.Root, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return spec.Report{}, fmt.Errorf("%w: HEAD is not on a branch (specs land on the branch the run starts on)", errParallelUsage)
	}
	start, err := git.Line(ctx, ws.Root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return spec.Report{}, fmt.Errorf("%w: %s has no commit yet", errParallelUsage, target)
	}
	// Every worktree starts from the last commit: a spec that is not
	// committed as it is on disk would run as something else.
	args := []string{"status", "--porcelain", "--"}
	for _, s := range specs {
		args = append(args, layout.RootRel(layout.SpecPath(s)))
	}
	if out, err := git.Run(ctx, ws.Root, args...); err != nil {
		return spec.Report{}, err
	} else if out = strings.TrimSpace(out); out != "" {
		return spec.Report{}, fmt.Errorf("%w: commit the specs first, each spec's worktree starts from the last commit:\n%s", errParallelUsage, out)
	}
	gates := gate.ForSpecs(cfg)
	queue := mergequeue.New(mergequeue.Options{
		Repo:   ws.Root,
		Target: target,
		Gates:  gate.Landing(gates),
		Say:    func(line string) { fmt.Fprintln(g.Stderr, "ralph: "+line) },
		Logger: g.Logger,
	})
	board := progress.NewBoard(g.Stdout)
	fmt.Fprintf(g.Stdout, "running %d specs, %d at a time, landing on %s\n", len(specs), cfg.Specs.Parallel, target)
	return p.RunParallel(ctx, specs, spec.ParallelOptions{
		N:      cfg.Specs.Parallel,
		Target: target,
		Start:  start,
		Queue:  queue,
		OpenSnapshots: func(ctx context.Context, dir string) (spec.Snapshots, error) {
			return snapshot.Open(ctx, dir, g.Logger)
		},
		MaxCost: cfg.Limits.MaxCost,
		Line:    board.Line,
	})
}

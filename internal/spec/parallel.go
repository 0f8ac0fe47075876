package spec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/mergequeue"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// Record states a parallel run adds.
const (
	// StateLanding: done in its worktree, in the merge queue.
	StateLanding = "landing"
	// StateConflict: could not land even after going back to the
	// implementer once; its branch is kept.
	StateConflict = "conflict"
)

// WorktreesDir is where a parallel run keeps its worktrees, relative to
// the workspace root (inside .ralph/, which git ignores).
const WorktreesDir = ".ralph/worktrees"

// BranchPrefix starts every spec branch: ralph/spec/<spec-id>.
const BranchPrefix = "ralph/spec/"

// ErrMaxCost ends a parallel run whose agents together cost more than
// ParallelOptions.MaxCost.
var ErrMaxCost = errors.New("the run reached its --max-cost")

// ParallelOptions configure RunParallel.
type ParallelOptions struct {
	// N is how many specs run at once.
	N int
	// Target is the branch the run started on; specs land there.
	Target string
	// Start is the commit a new spec worktree starts from.
	Start string
	// Queue lands the done specs' branches on Target.
	Queue *mergequeue.Queue
	// OpenSnapshots opens the snapshot store of a worktree.
	OpenSnapshots func(ctx context.Context, dir string) (Snapshots, error)
	// MaxCost ends the run once all specs together cost more; 0 is none.
	MaxCost float64
	// Line receives each spec's progress, one line at a time; nil writes
	// the lines to Options.Progress.
	Line func(s Spec, line string)
}

// WorktreeDir is the worktree of spec s under root.
func WorktreeDir(root string, s Spec) string {
	return filepath.Join(root, filepath.FromSlash(WorktreesDir), strings.ReplaceAll(s.ID, "/", "--"))
}

// RunParallel runs the specs N at a time, each in its own git worktree on
// branch ralph/spec/<id> (see WorktreeDir), the pipeline unchanged inside
// it, and lands every spec that is done through the merge queue in the
// order they finish. A landing that conflicts (or whose gates fail on the
// rebased result) sends the spec back to its implementer once, on the new
// tip, with the conflict as feedback; a second failure marks it conflict
// and keeps its branch. Landed specs' worktrees and branches are removed;
// the others stay for the next run to resume in.
func (p *Pipeline) RunParallel(ctx context.Context, specs []Spec, po ParallelOptions) (Report, error) {
	if po.N < 1 {
		po.N = 1
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p.forgetStop(ctx) // one left from before this run is not for it
	defer p.forgetStop(ctx)
	d := &driver{p: p, po: po, cancel: cancel}
	if po.Line == nil {
		d.po.Line = func(_ Spec, line string) { p.progress("%s", line) }
	}
	if err := worktree.Prune(ctx, p.opt.Layout.Root); err != nil {
		return Report{}, err
	}
	results := make([]Result, len(specs))
	errs := make([]error, len(specs))
	sem := make(chan struct{}, po.N)
	var wg sync.WaitGroup
	for i, s := range specs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil || d.budget() != nil {
			break // a slot taken here stays taken: no worker waits for it
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res, err := d.runOne(ctx, s)
			results[i], errs[i] = res, err
			if err != nil && !errors.Is(err, ErrMaxCost) {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	var rep Report
	var runErr error
	for i, s := range specs {
		if errs[i] != nil {
			if runErr == nil || !errors.Is(errs[i], context.Canceled) {
				runErr = fmt.Errorf("spec %s: %w", s.Rel, errs[i])
			}
			continue
		}
		if results[i].Outcome != "" {
			rep.Results = append(rep.Results, results[i])
		}
	}
	if err := d.budget(); err != nil {
		runErr = err // what cut the specs short
	}
	if err := worktree.Prune(context.WithoutCancel(ctx), p.opt.Layout.Root); err != nil && runErr == nil {
		runErr = err
	}
	return rep, runErr
}

// driver is one parallel run.
type driver struct {
	p      *Pipeline
	po     ParallelOptions
	cancel context.CancelCauseFunc

	mu   sync.Mutex
	cost float64
	snap sync.Mutex // refs/ralph/ is shared by every worktree
}

func (d *driver) spend(usd float64) {
	d.mu.Lock()
	d.cost += usd
	d.mu.Unlock()
}

// budget refuses new agent calls once the run has spent more than
// MaxCost; the calls running then finish.
func (d *driver) budget() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.po.MaxCost > 0 && d.cost > d.po.MaxCost {
		return fmt.Errorf("%w ($%.2f spent, limit $%.2f)", ErrMaxCost, d.cost, d.po.MaxCost)
	}
	return nil
}

// lineWriter turns a spec pipeline's progress into Line calls.
type lineWriter struct {
	s    Spec
	line func(Spec, string)
}

func (w lineWriter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		w.line(w.s, strings.TrimSpace(l))
	}
	return len(b), nil
}

// runOne runs one spec in its worktree and lands it.
func (d *driver) runOne(ctx context.Context, s Spec) (Result, error) {
	main := d.p.opt.Layout
	recs := d.p.opt.Records
	say := func(format string, args ...any) { d.po.Line(s, fmt.Sprintf(s.Rel+": "+format, args...)) }
	rec, _, err := recs.Spec(ctx, s.Rel)
	if err != nil {
		return Result{}, err
	}
	rec.ID = s.Rel
	done, err := main.IsDone(s)
	if err != nil {
		return Result{}, err
	}
	if done && !d.p.opt.Force {
		say("skipped (already done)")
		return Result{Spec: s, Outcome: Skipped, Reason: "already done"}, nil
	}
	branch := s.Branch()
	if rec.State == StateConflict && !d.p.opt.Force {
		if _, err := git.Run(ctx, main.Root, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err == nil {
			say("conflict (branch %s kept)", branch)
			return Result{Spec: s, Outcome: Conflict, Reason: rec.LastResult}, nil
		}
		rec.State, rec.Conflicts = StateNew, 0 // the user deleted the branch: start over
	}
	if done {
		if err := main.RemoveDone(s); err != nil {
			return Result{}, err
		}
		rec.LandedCommit = ""
	}
	wt, err := d.worktree(ctx, s, branch)
	if err != nil {
		return Result{}, err
	}
	rec.Worktree, rec.Branch = wt, branch
	if rec.State == "" {
		rec.State = StateNew
	}
	if err := recs.PutSpec(ctx, rec); err != nil {
		return Result{}, err
	}
	layout, err := NewLayout(wt, filepath.Join(wt, main.RootRel(main.Dir)))
	if err != nil {
		return Result{}, err
	}
	snaps, err := d.po.OpenSnapshots(ctx, wt)
	if err != nil {
		return Result{}, fmt.Errorf("open snapshots: %w", err)
	}
	opt := d.p.opt
	opt.Layout, opt.Snapshots, opt.Worktree = layout, lockedSnapshots{snaps, &d.snap}, wt
	opt.Progress, opt.OnCost, opt.Budget = lineWriter{s, d.po.Line}, d.spend, d.budget
	p := New(opt)
	var cost float64
	for {
		res, err := p.runSpec(ctx, s)
		if err != nil {
			return Result{}, err
		}
		cost += res.CostUSD
		res.CostUSD = cost
		if res.Outcome == Failed {
			say("FAILED: %s (worktree kept: %s)", res.Reason, main.RootRel(wt))
			return res, nil
		}
		if rec, _, err = recs.Spec(ctx, s.Rel); err != nil {
			return Result{}, err
		}
		rec.State, rec.LastResult = StateLanding, "waiting to land on "+d.po.Target
		if err := recs.PutSpec(ctx, rec); err != nil {
			return Result{}, err
		}
		say("landing on %s", d.po.Target)
		callID := p.startCall(ctx, &specRun{s: s}, "land", rec.Conflicts+1)
		lr, err := d.po.Queue.Land(ctx, mergequeue.Request{Branch: branch, Worktree: wt, Name: s.Rel})
		if err != nil {
			return Result{}, err
		}
		p.endCall(ctx, callID, string(lr.Outcome), 0)
		if lr.Outcome == mergequeue.Landed {
			if err := d.landed(ctx, s, layout, &rec, lr); err != nil {
				return Result{}, err
			}
			say("landed on %s as %s", d.po.Target, short(lr.Commit))
			return Result{Spec: s, Outcome: Done, CostUSD: cost, Logs: res.Logs}, nil
		}
		if rec.Conflicts >= 1 {
			rec.State = StateConflict
			rec.LastResult = ConflictInstruction(branch, d.po.Target, firstLine(lr.Reason))
			if err := recs.PutSpec(ctx, rec); err != nil {
				return Result{}, err
			}
			if err := d.removeWorktree(ctx, wt, ""); err != nil {
				return Result{}, err
			}
			say("CONFLICT: %s", rec.LastResult)
			return Result{Spec: s, Outcome: Conflict, Reason: rec.LastResult, CostUSD: cost, Logs: res.Logs}, nil
		}
		say("could not land (%s); back to the implementer on the new tip", firstLine(lr.Reason))
		if err := d.sendBack(ctx, s, layout, &rec, lr); err != nil {
			return Result{}, err
		}
	}
}

// ConflictInstruction is the one line ralph specs status shows for a spec
// that could not land.
func ConflictInstruction(branch, target, why string) string {
	return fmt.Sprintf("%s; branch %s kept: rebase it onto %s and fast-forward %s by hand, or delete it (git branch -D %s) to run the spec again", why, branch, target, target, branch)
}

// worktree returns the spec's worktree, creating it (and its branch from
// the start commit) when it is missing or half-made; a worktree a crash
// left mid-rebase is brought back to its branch.
func (d *driver) worktree(ctx context.Context, s Spec, branch string) (string, error) {
	root := d.p.opt.Layout.Root
	dir := WorktreeDir(root, s)
	res, err := worktree.Ensure(ctx, root, dir, worktree.Options{Branch: branch, Start: d.po.Start})
	if err != nil {
		return "", fmt.Errorf("create the worktree of %s: %w", s.Rel, err)
	}
	if res.Outcome == worktree.Reused {
		if err := mergequeue.AbortRebase(ctx, dir); err != nil {
			return "", err
		}
		return dir, nil
	}
	// What the agents keep in the worktree's .ralph/ (prompts, logs) is
	// never committed: its .gitignore ignores everything, itself too.
	ign := filepath.Join(dir, workspace.Dir, ".gitignore")
	if _, err := git.Run(ctx, dir, "ls-files", "--error-unmatch", "--", filepath.Join(workspace.Dir, ".gitignore")); err != nil {
		if err := workspace.WriteFile(ign, []byte("*\n")); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// stateFiles lists the spec's state files a landing carries into the
// workspace: the plan, its json, its archives and the done marker.
func stateFiles(l Layout, s Spec) []string {
	files := []string{l.PlanPath(s), l.PlanMetaPath(s), l.DonePath(s)}
	archives, _ := filepath.Glob(l.file(PlansDir, s.ID, ".attempt-*.md"))
	return append(files, archives...)
}

// landed copies the spec's state files the landing did not bring (they
// are not committed) into the workspace, records the landing and removes
// the worktree and its branch.
func (d *driver) landed(ctx context.Context, s Spec, wl Layout, rec *store.SpecRecord, lr mergequeue.Result) error {
	main := d.p.opt.Layout
	for _, src := range stateFiles(wl, s) {
		data, err := os.ReadFile(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		rel := wl.RootRel(src)
		if _, err := git.Run(ctx, main.Root, "ls-files", "--error-unmatch", "--", rel); err == nil {
			continue // tracked: the landing brought it
		}
		if err := workspace.WriteFile(filepath.Join(main.Root, filepath.FromSlash(rel)), data); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
	}
	rec.State, rec.LandedCommit, rec.LastResult = StateDone, lr.Commit, "landed on "+d.po.Target+" as "+short(lr.Commit)
	rec.Feedback, rec.BaseCommit = "", ""
	if err := d.p.opt.Records.PutSpec(ctx, *rec); err != nil {
		return err
	}
	return d.removeWorktree(ctx, wl.Root, rec.Branch)
}

// sendBack puts the spec back before its implementation, on the target's
// new tip, with the landing's failure as the implementer's feedback.
func (d *driver) sendBack(ctx context.Context, s Spec, wl Layout, rec *store.SpecRecord, lr mergequeue.Result) error {
	keep := map[string][]byte{}
	for _, f := range []string{wl.PlanPath(s), wl.PlanMetaPath(s)} {
		if data, err := os.ReadFile(f); err == nil {
			keep[f] = data
		}
	}
	if !lr.Rebased {
		if _, err := git.Run(ctx, wl.Root, "reset", "-q", "--hard", lr.Commit); err != nil {
			return err
		}
	}
	for f, data := range keep {
		if err := workspace.WriteFile(f, data); err != nil {
			return err
		}
	}
	if err := wl.RemoveDone(s); err != nil {
		return err
	}
	if err := wl.RemoveCandidate(s); err != nil {
		return err
	}
	rec.Conflicts++
	rec.State, rec.BaseCommit = StatePlanned, lr.Commit
	rec.LastResult = "sent back after a failed landing: " + firstLine(lr.Reason)
	what := "Your work could not land on " + d.po.Target + ": " + lr.Reason
	if lr.Rebased {
		what += "\n\nYour commits are now rebased onto " + d.po.Target + " (" + short(lr.Commit) + "); fix the failure and commit."
	} else {
		what += "\n\nThe worktree now starts from the current " + d.po.Target + " (" + short(lr.Commit) + ") without your earlier commits; implement the plan again on top of it and commit."
	}
	rec.Feedback = what
	return d.p.opt.Records.PutSpec(ctx, *rec)
}

// removeWorktree removes a worktree (and branch, when given).
func (d *driver) removeWorktree(ctx context.Context, dir, branch string) error {
	return worktree.Remove(ctx, d.p.opt.Layout.Root, dir, branch)
}

// lockedSnapshots serialises the snapshot stores of every worktree: their
// refs (refs/ralph/) are the repository's, shared by all of them.
type lockedSnapshots struct {
	s  Snapshots
	mu *sync.Mutex
}

func (l lockedSnapshots) Save(ctx context.Context, name, message string) (snapshot.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Save(ctx, name, message)
}

func (l lockedSnapshots) Diff(ctx context.Context, name string) ([]snapshot.FileChange, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Diff(ctx, name)
}

func (l lockedSnapshots) Rollback(ctx context.Context, name string) (snapshot.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Rollback(ctx, name)
}

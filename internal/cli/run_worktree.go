package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/mergequeue"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// runTaskInWorktree runs one task as ralph run does, but in a git worktree
// .ralph/worktrees/task-<N> on branch ralph/task/<N> started from HEAD; a
// completed task's changes are committed there and land on the current
// branch through the merge queue (rebase, gates, fast-forward), and the
// worktree and branch are removed. A task that does not complete, or
// cannot land, keeps its worktree and branch.
func runTaskInWorktree(ctx context.Context, g *Globals, o *RunOptions, message string) error {
	ws, cfg, err := openWorkspace(ctx, g)
	if err != nil {
		return err
	}
	target, err := worktree.Target(ctx, ws.Root)
	if err != nil {
		return usageError(fmt.Errorf("--worktree: %w", err))
	}
	// A misconfigured agent is a usage error before anything is recorded
	// or checked out.
	checked := cfg
	o.apply(&checked)
	if _, _, err := buildAgents(ws, checked, o.agent, g.Logger); err != nil {
		return err
	}
	lock, err := ws.Lock()
	if err != nil {
		return failure.New(failure.Failed, err)
	}
	defer lock.Release()
	// The request is written before the store exists, as ralph run's is:
	// a kill before the task is recorded leaves ralph resume a task to
	// start in a worktree.
	req, err := newRequest(message, o)
	if err != nil {
		return err
	}
	req.Worktree = true
	if err := req.save(ws); err != nil {
		return err
	}
	pausepoint.At(pausepoint.RequestWritten)
	st, err := startRunStore(ctx, g, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	return startWorktreeTask(ctx, g, ws, st, cfg, o, req, target)
}

// startWorktreeTask records req's task as the worktree task, with the
// number the engine will give it, and runs it (ralph run --worktree, or
// ralph resume after a kill before the record).
func startWorktreeTask(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config, o *RunOptions, req *runRequest, target string) error {
	// The task's number, as the engine will choose it (snapshot names are
	// the repository's, shared by every worktree).
	snaps, err := snapshot.Open(ctx, ws.Root, g.Logger)
	if err != nil {
		return err
	}
	n, err := engine.NextTaskNumber(ctx, st, snaps, ws.Int(workspace.TaskCounter))
	if err != nil {
		return err
	}
	if old, err := currentWorktreeTask(ctx, ws, st); err == nil && old != nil {
		if _, began := old.taskID(ctx, st); !began && !old.Landing {
			// Stopped before its task began: no agent ran there, and its
			// branch starts from an older HEAD. Drop it so its number is
			// free.
			if err := worktree.Remove(ctx, ws.Root, filepath.Join(ws.Root, old.Dir), old.Branch); err != nil {
				return fmt.Errorf("discard the unstarted task %d: %w", old.Number, err)
			}
		} else {
			// Only the newest worktree task is resumable: say what is left.
			fmt.Fprintf(g.Stderr, "ralph: task %d in %s has not landed; ralph resume will no longer continue it (its branch %s is kept)\n", old.Number, old.Dir, old.Branch)
		}
	}
	rec := &worktreeTask{
		Number: n, Dir: filepath.Join(workspace.Dir, workspace.Worktrees, "task-"+strconv.Itoa(n)),
		Branch: "ralph/task/" + strconv.Itoa(n), Target: target, Message: req.Message,
		Token: req.Token, Options: req.Options, At: req.At,
	}
	if err := worktree.Prune(ctx, ws.Root); err != nil {
		return err
	}
	// Recorded before the worktree exists: ralph resume finishes whatever
	// a kill interrupted from here on.
	if err := rec.save(ctx, st); err != nil {
		return err
	}
	return driveWorktreeTask(ctx, g, ws, st, cfg, o, rec, true)
}

// keyWorktreeTask holds the task ralph run --worktree started last and
// that has not landed yet: ralph resume continues it, ralph status shows
// its state.
const keyWorktreeTask = "cli:worktree_task"

// worktreeTask is a ralph run --worktree task, kept in the store until it
// lands.
type worktreeTask struct {
	Number int `json:"number"`
	// Dir is the worktree, relative to the repository's root.
	Dir     string         `json:"dir"`
	Branch  string         `json:"branch"`
	Target  string         `json:"target"`
	Message string         `json:"message"`
	Token   string         `json:"token"`
	Options requestOptions `json:"options"`
	// Landing is set once the task completed and its changes are
	// committed on Branch: what is left is landing it.
	Landing bool      `json:"landing,omitempty"`
	At      time.Time `json:"at"`
}

func (w *worktreeTask) save(ctx context.Context, st *store.Store) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := st.SetState(ctx, keyWorktreeTask, string(b)); err != nil {
		return fmt.Errorf("record the worktree task: %w", err)
	}
	return nil
}

// taskID is the store's id of the task, false while it is not recorded.
func (w *worktreeTask) taskID(ctx context.Context, st *store.Store) (int64, bool) {
	v, ok, err := st.State(ctx, store.RequestKey(w.Token))
	if err != nil || !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil && id > 0
}

// currentWorktreeTask returns the unlanded ralph run --worktree task when
// it is newer than the last plain ralph run (whose request is in the main
// .ralph/request.json); nil otherwise.
func currentWorktreeTask(ctx context.Context, ws *workspace.Workspace, st *store.Store) (*worktreeTask, error) {
	raw, ok, err := st.State(ctx, keyWorktreeTask)
	if err != nil || !ok {
		return nil, err
	}
	var w worktreeTask
	if err := json.Unmarshal([]byte(raw), &w); err != nil || w.Number == 0 || w.Branch == "" {
		return nil, nil
	}
	if req := loadRequest(ws); req != nil && req.At.After(w.At) {
		return nil, nil
	}
	return &w, nil
}

// resumeWorktreeTask continues an interrupted ralph run --worktree task in
// its worktree, or lands one that completed but could not land.
func resumeWorktreeTask(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config, o *RunOptions, rec *worktreeTask) error {
	o.inherit(rec.Options)
	_, recorded := rec.taskID(ctx, st)
	fmt.Fprintf(g.Stdout, "resuming task %d in %s on %s\n", rec.Number, rec.Dir, rec.Branch)
	return driveWorktreeTask(ctx, g, ws, st, cfg, o, rec, !recorded && !rec.Landing)
}

// driveWorktreeTask runs (start) or resumes rec's task in its worktree,
// commits a completed task's changes on its branch and lands the branch
// through the merge queue; a landed task's worktree, branch and record
// are removed.
func driveWorktreeTask(ctx context.Context, g *Globals, ws *workspace.Workspace, st *store.Store, cfg config.Config, o *RunOptions, rec *worktreeTask, start bool) error {
	n, branch, rel := rec.Number, rec.Branch, rec.Dir
	dir := filepath.Join(ws.Root, rec.Dir)
	// A half-made worktree is made again; a new branch starts from HEAD.
	if _, err := worktree.Ensure(ctx, ws.Root, dir, worktree.Options{Branch: branch, Start: "HEAD"}); err != nil {
		return fmt.Errorf("create the task's worktree: %w", err)
	}
	if !rec.Landing {
		// The worktree's .ralph/ is the task's own and is never committed.
		wws := &workspace.Workspace{Root: dir}
		if err := workspace.WriteFile(filepath.Join(dir, workspace.Dir, ".gitignore"), []byte("*\n")); err != nil {
			return err
		}
		if err := wws.Init(); err != nil {
			return err
		}
		if start {
			if err := wws.SetInt(workspace.TaskCounter, n-1); err != nil {
				return err
			}
		}
		opt, err := runEngineOptions(ctx, g, wws, st, cfg, o)
		if err != nil {
			return err
		}
		defer gate.Close(opt.Gates)
		rep := newReporter(g.Stdout, o.json)
		defer rep.Close()
		opt.Reporter = rep
		defer session.StartNotifier(ctx, g, ws, st, cfg.Notify, opt.Limits.MaxCost)()
		var out engine.Outcome
		id, recorded := rec.taskID(ctx, st)
		var t store.Task
		if recorded {
			if t, err = st.GetTask(ctx, id); err != nil {
				return err
			}
		}
		switch {
		case start:
			fmt.Fprintf(g.Stdout, "task %d runs in %s on %s\n", n, rel, branch)
			opt.Request = rec.Token
			out, err = engine.New(wws, st, opt).Run(ctx, rec.Message)
		case t.Status == store.TaskDone && t.Reason == string(engine.Completed):
			// Killed after the task completed, before it landed.
			out = engine.Outcome{Reason: engine.Completed, Task: t.Number, TaskID: t.ID}
		default:
			if latest, lerr := st.LatestTask(ctx); lerr != nil || latest.ID != id {
				return failure.New(failure.Failed, fmt.Errorf("%w: task %d in %s is not the latest task", engine.ErrNothingToResume, n, rel))
			}
			out, err = engine.New(wws, st, opt).Resume(ctx, o.force)
		}
		_ = ws.SetInt(workspace.TaskCounter, max(n, ws.Int(workspace.TaskCounter)))
		if errors.Is(err, engine.ErrNothingToResume) {
			return failure.New(failure.Failed, err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return failure.New(engine.Interrupted, fmt.Errorf("interrupted (the task's worktree %s and branch %s are kept; continue with ralph resume): %w", rel, branch, err))
			}
			return err
		}
		if out.Reason != engine.Completed {
			fmt.Fprintf(g.Stdout, "task %d did not complete; its worktree %s and branch %s are kept\n", n, rel, branch)
			return failure.New(out.Reason, nil)
		}
		if err := worktree.CommitWork(ctx, dir, fmt.Sprintf("ralph task %d: %s", n, progress.OneLine(rec.Message, 72))); err != nil {
			return err
		}
		rec.Landing = true
		if err := rec.save(ctx, st); err != nil {
			return err
		}
	}
	target := rec.Target
	gates := gate.ForSpecs(cfg)
	q := mergequeue.New(mergequeue.Options{
		Repo: ws.Root, Target: target, Logger: g.Logger,
		Say:   func(line string) { fmt.Fprintln(g.Stderr, "ralph: "+line) },
		Gates: gate.Landing(gates),
	})
	lr, err := q.Land(ctx, mergequeue.Request{Branch: branch, Worktree: dir, Name: "task " + strconv.Itoa(n)})
	if err != nil {
		return err
	}
	if lr.Outcome != mergequeue.Landed {
		if err := worktree.Remove(ctx, ws.Root, dir, ""); err != nil {
			return err
		}
		return failure.New(failure.NotLanded, fmt.Errorf("task %d could not land on %s: %s; branch %s kept (ralph resume tries again)", n, target, progress.OneLine(strings.SplitN(strings.TrimSpace(lr.Reason), "\n", 2)[0], 200), branch))
	}
	if err := worktree.Remove(ctx, ws.Root, dir, branch); err != nil {
		return err
	}
	if err := st.DeleteState(ctx, keyWorktreeTask); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "task %d landed on %s as %s\n", n, target, lr.Commit[:12])
	return nil
}

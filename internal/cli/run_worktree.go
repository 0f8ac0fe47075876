package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/mergequeue"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Exit code of ralph run --worktree when the completed task cannot land.
const runExitConflict = 12

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
	target, err := mergequeue.Git(ctx, ws.Root, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return usageError(errors.New("--worktree: HEAD is not on a branch (the task lands on the branch it starts on)"))
	}
	target = strings.TrimSpace(target)
	if _, err := mergequeue.Git(ctx, ws.Root, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return usageError(fmt.Errorf("--worktree: %s has no commit yet", target))
	}
	lock, err := ws.Lock()
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	defer lock.Release()
	if err := ws.Init(); err != nil {
		return err
	}
	st, err := openStore(ctx, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := endOrphansBeforeRun(ctx, st, g.Stderr); err != nil {
		return err
	}
	// The task's number, as the engine will choose it (snapshot names are
	// the repository's, shared by every worktree).
	prev := ws.Int(workspace.TaskCounter)
	highest, err := st.MaxTaskNumber(ctx)
	if err != nil {
		return err
	}
	snaps, err := snapshot.Open(ctx, ws.Root, g.Logger)
	if err != nil {
		return err
	}
	n := max(prev, highest) + 1
	for {
		taken, err := snaps.Exists(ctx, snapshot.TaskPre(n))
		if err != nil {
			return err
		}
		if !taken {
			break
		}
		n++
	}
	branch := "ralph/task/" + strconv.Itoa(n)
	dir := filepath.Join(ws.Path(workspace.Worktrees), "task-"+strconv.Itoa(n))
	rel := filepath.Join(workspace.Dir, workspace.Worktrees, "task-"+strconv.Itoa(n))
	if _, err := mergequeue.Git(ctx, ws.Root, "worktree", "prune"); err != nil {
		return err
	}
	if _, err := mergequeue.Git(context.WithoutCancel(ctx), ws.Root, "worktree", "add", "-q", "-b", branch, dir, "HEAD"); err != nil {
		return fmt.Errorf("create the task's worktree: %w", err)
	}
	// The worktree's .ralph/ is the task's own and is never committed.
	wws := &workspace.Workspace{Root: dir}
	if err := workspace.WriteFile(filepath.Join(dir, workspace.Dir, ".gitignore"), []byte("*\n")); err != nil {
		return err
	}
	if err := wws.Init(); err != nil {
		return err
	}
	if err := wws.SetInt(workspace.TaskCounter, n-1); err != nil {
		return err
	}
	o.apply(&cfg)
	ag, fallbacks, err := buildAgents(wws, cfg, o.agent, g.Logger)
	if err != nil {
		return err
	}
	opt, err := engineOptions(ctx, g, wws, st, cfg, ag)
	if err != nil {
		return err
	}
	if len(fallbacks) > 0 {
		opt.Fallbacks = fallbacks
	}
	rep := newReporter(g.Stdout, o.json)
	defer rep.Close()
	opt.Reporter = rep
	fmt.Fprintf(g.Stdout, "task %d runs in %s on %s\n", n, rel, branch)
	out, err := engine.New(wws, st, opt).Run(ctx, message)
	_ = ws.SetInt(workspace.TaskCounter, max(n, ws.Int(workspace.TaskCounter)))
	if err != nil {
		if ctx.Err() != nil {
			return &ExitError{Code: engine.Interrupted.ExitCode(), Err: fmt.Errorf("interrupted (the task's worktree %s and branch %s are kept): %w", rel, branch, err)}
		}
		return err
	}
	if out.Reason != engine.Completed {
		fmt.Fprintf(g.Stdout, "task %d did not complete; its worktree %s and branch %s are kept\n", n, rel, branch)
		return &ExitError{Code: out.Reason.ExitCode()}
	}
	if _, err := mergequeue.Git(ctx, dir, "add", "-A"); err != nil {
		return err
	}
	if _, err := mergequeue.Git(ctx, dir, "diff", "--cached", "--quiet"); err != nil {
		if _, err := mergequeue.Git(ctx, dir, "commit", "-q", "-m", fmt.Sprintf("ralph task %d: %s", n, trimOneLine(message, 72))); err != nil {
			return err
		}
	}
	gates := specGates(cfg)
	var wtLock sync.Mutex
	q := mergequeue.New(mergequeue.Options{
		Repo: ws.Root, Target: target, WorktreeLock: &wtLock, Logger: g.Logger,
		Say:   func(line string) { fmt.Fprintln(g.Stderr, "ralph: "+line) },
		Gates: landingGates(gates),
	})
	lr, err := q.Land(ctx, mergequeue.Request{Branch: branch, Worktree: dir, Name: "task " + strconv.Itoa(n)})
	if err != nil {
		return err
	}
	if lr.Outcome != mergequeue.Landed {
		if _, err := mergequeue.Git(ctx, ws.Root, "worktree", "remove", "-f", "-f", dir); err != nil {
			return err
		}
		return &ExitError{Code: runExitConflict, Err: fmt.Errorf("task %d could not land on %s: %s; branch %s kept", n, target, firstLineOf(lr.Reason), branch)}
	}
	for _, args := range [][]string{{"worktree", "remove", "-f", "-f", dir}, {"branch", "-D", "-q", branch}, {"worktree", "prune"}} {
		if _, err := mergequeue.Git(ctx, ws.Root, args...); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "task %d landed on %s as %s\n", n, target, lr.Commit[:12])
	return nil
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

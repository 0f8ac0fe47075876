package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// TaskPrepare is the activity that opens a task's attempt on this worker:
// it clones or fetches the remote into the cache and adds a worktree on
// the task's branch at the base commit.
func (r *Runner) TaskPrepare(ctx context.Context, step TaskStep) (Prepared, error) {
	info := activity.GetInfo(ctx)
	defer r.beating(ctx, Progress{Worker: r.Identity, Attempt: step.Attempt, Phase: "preparing"})()
	r.Log.Info("task attempt starts", "workflow", info.WorkflowExecution.ID, "attempt", step.Attempt, "job", step.Job.Name)
	wt, err := r.prepare(ctx, step.Job, info.WorkflowExecution.ID, step.Attempt)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Worktree: wt, Worker: r.Identity}, nil
}

// TaskIteration is the activity that runs one iteration of a task in its
// worktree: ralph run --yield-after 1 for the first, ralph resume
// --yield-after 1 for the others, as a supervised process group. It
// heartbeats with the run's progress and relays <Human> requests, answers
// and the stop request (the bridge); cancelled, or when its heartbeat
// times out, the process group ends.
func (r *Runner) TaskIteration(ctx context.Context, step TaskStep) (Ran, error) {
	info := activity.GetInfo(ctx)
	wfID, runID := info.WorkflowExecution.ID, info.WorkflowExecution.RunID
	log := r.Log.With("workflow", wfID, "attempt", step.Attempt, "iteration", step.Iteration)
	wt := step.Worktree
	if _, err := os.Stat(filepath.Join(wt, ".git")); err != nil {
		return Ran{}, fmt.Errorf("the task's worktree %s is gone: %w", wt, err)
	}
	if step.Stop != "" {
		// A stop that came between iterations: ralph resume stops before
		// it runs the next.
		if err := setStop(ctx, filepath.Join(wt, workspace.Dir, workspace.Database), step.Stop); err != nil {
			return Ran{}, err
		}
	}
	out, said, err := r.runRalph(ctx, wt, iterationArgs(step), func(ctx context.Context) {
		r.bridge(ctx, wt, wfID, runID, step.Attempt)
	})
	if ctx.Err() != nil {
		log.Info("iteration cancelled", "err", ctx.Err())
		return Ran{}, ctx.Err()
	}
	if err != nil {
		return Ran{}, err
	}
	ran := Ran{ExitCode: out.ExitCode, Tail: said, Worker: r.Identity}
	log.Info("iteration ends", "exit", ran.ExitCode)
	return ran, nil
}

// iterationArgs is ralph's argv (without the program) for step: the
// job's ralph run for the first iteration, ralph resume after, each
// returning after one iteration. Both run here (--local), whatever
// ralph.toml in the repository says about Temporal.
func iterationArgs(step TaskStep) []string {
	const yield = "--yield-after=1"
	if step.Iteration > 1 || len(step.Job.Args) == 0 {
		return []string{"resume", "--local", yield}
	}
	args := []string{step.Job.Args[0], yield}
	for i, a := range step.Job.Args[1:] {
		if a == "--" {
			args = append(args, step.Job.Args[1+i:]...)
			break
		}
		if !strings.HasPrefix(a, "--yield-after") {
			args = append(args, a)
		}
	}
	return args
}

// setStop puts a stop request in the task's store.
func setStop(ctx context.Context, db, reason string) error {
	st, err := store.Open(ctx, db)
	if err != nil {
		return fmt.Errorf("open the task's store: %w", err)
	}
	defer st.Close()
	if err := st.SetState(ctx, store.KeyStopRequest, reason); err != nil {
		return fmt.Errorf("request the stop: %w", err)
	}
	return nil
}

// TaskFinish is the activity that closes a task's attempt: a task that
// completed has what it left uncommitted (but ralph's own .ralph/)
// committed and its branch pushed; the worktree's store and logs move to
// the cache's runs/<workflow-id>/, which the result names as the
// transcript (WORKER:PATH); the worktree goes.
func (r *Runner) TaskFinish(ctx context.Context, step TaskStep) (Result, error) {
	info := activity.GetInfo(ctx)
	wfID := info.WorkflowExecution.ID
	defer r.beating(ctx, Progress{Worker: r.Identity, Attempt: step.Attempt, Phase: "finishing"})()
	wt, job := step.Worktree, step.Job
	res := Result{ExitCode: step.ExitCode, Branch: job.Branch, Worker: r.Identity, Tail: step.Tail}
	if res.ExitCode == 0 {
		if _, err := git.Run(ctx, wt, "add", "-A", "--", ".", ":(exclude)"+workspace.Dir); err != nil {
			return Result{}, err
		}
		if _, err := git.Run(ctx, wt, "diff", "--cached", "--quiet"); err != nil {
			if _, err := git.Run(ctx, wt, "commit", "-q", "-m", "ralph: "+job.Kind+" "+job.Name); err != nil {
				return Result{}, err
			}
		}
		var err error
		if res.Commit, err = git.Line(ctx, wt, "rev-parse", "HEAD"); err != nil {
			return Result{}, err
		}
		// An earlier attempt may have pushed before its worker was lost.
		if _, err := git.Run(ctx, wt, "push", "--force", "origin", "HEAD:refs/heads/"+job.Branch); err != nil {
			return Result{}, err
		}
	}
	// runs/<workflow>/<entry>, as a spec's steps: PruneRuns ages entries.
	runs := filepath.Join(r.Cache, "runs", slug(wfID), fmt.Sprintf("task-attempt-%d", step.Attempt))
	if err := keepTranscript(filepath.Join(wt, workspace.Dir), runs); err != nil {
		return Result{}, err
	}
	res.Transcript = r.Identity + ":" + filepath.Join(runs, workspace.Database)
	common, err := git.Line(ctx, wt, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return Result{}, err
	}
	repo := filepath.Dir(common)
	if err := worktree.Remove(ctx, repo, wt, ""); err != nil {
		r.Log.Warn("remove the task's worktree", "worktree", wt, "err", err)
	}
	dropWorkflowDir(filepath.Dir(wt)) // when no other attempt is there
	r.Log.Info("task attempt ends", "workflow", wfID, "attempt", step.Attempt, "exit", res.ExitCode, "commit", res.Commit, "transcript", res.Transcript)
	return res, nil
}

// keepTranscript moves the store (with its WAL files) and the logs of the
// .ralph/ directory state into dir, replacing what dir held.
func keepTranscript(state, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{workspace.Database, workspace.Database + "-wal", workspace.Database + "-shm", workspace.Logs} {
		err := os.Rename(filepath.Join(state, name), filepath.Join(dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("keep the transcript: %w", err)
		}
	}
	return nil
}

// beating heartbeats p every beat until the returned func is called.
func (r *Runner) beating(ctx context.Context, p Progress) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.beatEvery(ctx, func(context.Context) Progress { return p })
	}()
	return func() {
		cancel()
		<-done
	}
}

// beatEvery heartbeats what next says, now and every beat, until ctx
// ends.
func (r *Runner) beatEvery(ctx context.Context, next func(context.Context) Progress) {
	beat := r.Beat
	if beat <= 0 {
		beat = time.Second
	}
	t := time.NewTicker(beat)
	defer t.Stop()
	for {
		activity.RecordHeartbeat(ctx, next(ctx))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

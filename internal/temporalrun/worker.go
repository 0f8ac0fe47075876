package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register adds the workflows and r's activities to w.
func Register(w worker.Registry, r *Runner) {
	w.RegisterWorkflowWithOptions(JobWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(r.RunJob, activity.RegisterOptions{Name: ActivityName})
	w.RegisterActivityWithOptions(r.SpecStep, activity.RegisterOptions{Name: StepActivityName})
	w.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: TaskWorkflowName})
	w.RegisterActivityWithOptions(r.TaskPrepare, activity.RegisterOptions{Name: TaskPrepareActivity})
	w.RegisterActivityWithOptions(r.TaskIteration, activity.RegisterOptions{Name: TaskIterationActivity})
	w.RegisterActivityWithOptions(r.TaskFinish, activity.RegisterOptions{Name: TaskFinishActivity})
}

// Serve runs a worker on queue until ctx ends, at most concurrency
// attempts (and concurrency task sessions) at once (0: 4).
func Serve(ctx context.Context, r *Runner, queue string, concurrency int) error {
	if concurrency <= 0 {
		concurrency = 4
	}
	w := worker.New(r.Client, queue, worker.Options{
		MaxConcurrentActivityExecutionSize: concurrency,
		Identity:                           r.Identity,
		// An attempt cancelled by its workflow ends its process group
		// before the worker lets go of it.
		WorkerStopTimeout: 0,
		// Heartbeats carry the live progress status shows: send them
		// within two seconds rather than at 80% of the timeout.
		MaxHeartbeatThrottleInterval:     2 * time.Second,
		DefaultHeartbeatThrottleInterval: 2 * time.Second,
		// A task runs in a session: its iterations share its worktree,
		// so they run on the worker that prepared it.
		EnableSessionWorker:               true,
		MaxConcurrentSessionExecutionSize: concurrency,
	})
	Register(w, r)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	if r.Keep > 0 {
		go r.pruneEvery(ctx, time.Hour)
	}
	<-ctx.Done()
	w.Stop()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}

// pruneEvery prunes runs/ now and every period until ctx ends.
func (r *Runner) pruneEvery(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if r.Client != nil {
			if n, err := r.PruneClosed(ctx, r.Client); err != nil {
				r.Log.Warn("prune worktrees", "err", err)
			} else if n > 0 {
				r.Log.Info("pruned the worktrees of ended workflows", "worktrees", n)
			}
		}
		if n, err := r.PruneRuns(time.Now(), r.Keep); err != nil {
			r.Log.Warn("prune transcripts", "err", err)
		} else if n > 0 {
			r.Log.Info("pruned transcripts", "steps", n, "older than", r.Keep)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

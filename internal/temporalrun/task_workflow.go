package temporalrun

import (
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ralph-harness/ralph/internal/engine"
)

// Names of the task workflow and its activities. A task runs in one
// Temporal session, so on one worker: ralph.TaskPrepare makes its
// worktree, one ralph.TaskIteration per iteration of the engine runs the
// agent, ralph.TaskFinish pushes the branch and keeps the transcript.
const (
	TaskWorkflowName      = "ralph.Task"
	TaskPrepareActivity   = "ralph.TaskPrepare"
	TaskIterationActivity = "ralph.TaskIteration"
	TaskFinishActivity    = "ralph.TaskFinish"
)

// exitYielded is ralph's exit code when an iteration ran and the task
// goes on (ralph run --yield-after).
var exitYielded = engine.Yielded.ExitCode()

// exitStopped is the task's exit code when it was stopped before it began.
var exitStopped = engine.Stopped.ExitCode()

// TaskStep is the input of a task's activities.
type TaskStep struct {
	Job Job
	// Attempt numbers the task's sessions from 1: a lost worker's task
	// starts again, from the base commit, as the next attempt.
	Attempt int32
	// Worktree is the attempt's worktree on the session's worker, as
	// ralph.TaskPrepare made it.
	Worktree string
	// Iteration numbers the iteration activities of the attempt from 1:
	// the first runs ralph run, the others ralph resume.
	Iteration int
	// Stop is the stop request the workflow holds; the iteration puts it
	// in the task's store before ralph resumes, which then stops.
	Stop string
	// ExitCode is ralph's last exit code, for ralph.TaskFinish.
	ExitCode int
	// Tail is the end of ralph's last output, for ralph.TaskFinish.
	Tail string
}

// Prepared is what ralph.TaskPrepare made.
type Prepared struct {
	Worktree string
	Worker   string
}

// Ran is what one ralph.TaskIteration saw.
type Ran struct {
	// ExitCode is ralph's exit code: exitYielded when the task goes on.
	ExitCode int
	Tail     string
	Worker   string
}

// TaskWorkflow runs a ralph run --temporal task: in a session on one
// worker, one activity per iteration while the engine yields, each
// heartbeating with the iteration and event count. <Human> answers and
// the stop request reach the iteration through the status query, as they
// do for JobWorkflow. When the session's worker is lost, the task starts
// again from the base commit in a new session, up to job.MaxAttempts
// attempts, and the status says so in Restarts.
func TaskWorkflow(ctx workflow.Context, job Job) (Result, error) {
	st := &Status{Job: job}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return *st, nil }); err != nil {
		return Result{}, fmt.Errorf("query handler: %w", err)
	}
	keepSignals(ctx, st)
	hb := job.HeartbeatTimeout
	if hb <= 0 {
		hb = 30 * time.Second
	}
	attempts := job.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	for attempt := int32(1); ; attempt++ {
		st.Attempts = int(attempt)
		res, worker, err := runTaskAttempt(ctx, job, attempt, hb, st)
		if err == nil {
			st.Done, st.Result = true, &res
			return res, nil
		}
		if ctx.Err() != nil { // cancelled
			st.Done, st.Error = true, err.Error()
			return Result{}, err
		}
		where := "a worker"
		if worker != "" {
			where = worker
		}
		if int(attempt) >= attempts {
			st.Done = true
			st.Error = fmt.Sprintf("attempt %d on %s failed: %s; no attempts left (%d)", attempt, where, brief(err), attempts)
			return Result{}, temporal.NewNonRetryableApplicationError(st.Error, "TaskAttemptsExhausted", err)
		}
		note := fmt.Sprintf("attempt %d on %s failed: %s; attempt %d starts again from the base commit in a new session", attempt, where, brief(err), attempt+1)
		st.Restarts = append(st.Restarts, note)
		workflow.GetLogger(ctx).Warn("task restarts", "attempt", attempt, "err", err)
		st.Pending = Pending{Attempt: attempt + 1}
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			st.Done, st.Error = true, err.Error()
			return Result{}, err
		}
	}
}

// runTaskAttempt runs the task once, in a new session; it returns the
// result, or the error that lost the attempt and the worker it ran on.
func runTaskAttempt(ctx workflow.Context, job Job, attempt int32, hb time.Duration, st *Status) (Result, string, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 7 * 24 * time.Hour,
		HeartbeatTimeout:    hb,
		WaitForCancellation: true,
		// The session is the retry: its activities run on its worker, so
		// retrying one where the worker is gone would wait for nothing.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	sctx, err := workflow.CreateSession(actx, &workflow.SessionOptions{
		CreationTimeout:  7 * 24 * time.Hour,
		ExecutionTimeout: 7 * 24 * time.Hour,
		HeartbeatTimeout: hb,
	})
	if err != nil {
		return Result{}, "", fmt.Errorf("create a session: %w", err)
	}
	defer workflow.CompleteSession(sctx)
	step := TaskStep{Job: job, Attempt: attempt}
	var prep Prepared
	if err := workflow.ExecuteActivity(sctx, TaskPrepareActivity, step).Get(sctx, &prep); err != nil {
		return Result{}, "", fmt.Errorf("prepare: %w", lost(sctx, err))
	}
	step.Worktree = prep.Worktree
	ran := Ran{ExitCode: exitYielded}
	for n := 1; ran.ExitCode == exitYielded; n++ {
		step.Iteration, step.Stop = n, st.Stop
		if n == 1 && st.Stop != "" {
			// Stopped before the task began: ralph run would clear the
			// request as a new task starts.
			ran = Ran{ExitCode: exitStopped, Tail: "stopped before the task began: " + st.Stop}
			break
		}
		if err := workflow.ExecuteActivity(sctx, TaskIterationActivity, step).Get(sctx, &ran); err != nil {
			return Result{}, prep.Worker, fmt.Errorf("iteration activity %d: %w", n, lost(sctx, err))
		}
		// ralph exited: nothing waits on a human now.
		st.Pending = Pending{Attempt: attempt}
	}
	step.ExitCode, step.Tail = ran.ExitCode, ran.Tail
	var res Result
	if err := workflow.ExecuteActivity(sctx, TaskFinishActivity, step).Get(sctx, &res); err != nil {
		return Result{}, prep.Worker, fmt.Errorf("finish: %w", lost(sctx, err))
	}
	return res, prep.Worker, nil
}

// keepSignals keeps the answers, pending requests and stop request the
// workflow is sent in st, for the status query.
func keepSignals(ctx workflow.Context, st *Status) {
	answers := workflow.GetSignalChannel(ctx, SignalAnswer)
	pending := workflow.GetSignalChannel(ctx, SignalPending)
	stop := workflow.GetSignalChannel(ctx, SignalStop)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(answers, func(c workflow.ReceiveChannel, _ bool) {
				var a Answer
				c.Receive(ctx, &a)
				st.Answers = append(st.Answers, a)
			})
			sel.AddReceive(pending, func(c workflow.ReceiveChannel, _ bool) {
				var p Pending
				c.Receive(ctx, &p)
				if p.Attempt >= st.Pending.Attempt {
					st.Pending = p
				}
			})
			sel.AddReceive(stop, func(c workflow.ReceiveChannel, _ bool) {
				var reason string
				c.Receive(ctx, &reason)
				if reason == "" {
					reason = "stopped by the user"
				}
				st.Stop = reason
			})
			sel.Select(ctx)
		}
	})
}

// ErrWorkerLost means the session's worker stopped heartbeating: it died
// or lost its connection.
var ErrWorkerLost = errors.New("the worker was lost")

// lost says why an activity of the session sctx failed: the worker was
// lost when the activity timed out on heartbeat or the session failed.
func lost(sctx workflow.Context, err error) error {
	var te *temporal.TimeoutError
	if errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT {
		return fmt.Errorf("%w (no heartbeat): %w", ErrWorkerLost, err)
	}
	if info := workflow.GetSessionInfo(sctx); info != nil && info.SessionState == workflow.SessionStateFailed {
		return fmt.Errorf("%w (its session failed): %w", ErrWorkerLost, err)
	}
	return err
}

// brief is err as one short line for a person: the worker lost, or the
// activity's own message without Temporal's wrapping.
func brief(err error) string {
	var ae *temporal.ApplicationError
	switch {
	case errors.Is(err, ErrWorkerLost):
		msg := err.Error()
		i := strings.Index(msg, ErrWorkerLost.Error())
		msg = msg[i:]
		if j := strings.Index(msg, "): "); j >= 0 {
			msg = msg[:j+1]
		}
		return msg
	case errors.As(err, &ae):
		return ae.Error()
	}
	return err.Error()
}

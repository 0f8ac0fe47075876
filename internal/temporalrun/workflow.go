package temporalrun

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names of the workflow, its activity, signals and query.
const (
	WorkflowName = "ralph.Job"
	ActivityName = "ralph.RunJob"
	// SignalAnswer carries an Answer to a <Human> request.
	SignalAnswer = "human-answer"
	// SignalPending carries the Pending requests an attempt waits on; the
	// activity sends it.
	SignalPending = "human-pending"
	// SignalStop asks the run to stop after its current iteration.
	SignalStop = "stop"
	// QueryStatus returns the workflow's Status.
	QueryStatus = "status"
)

// Kinds of Job.
const (
	KindTask = "task"
	KindSpec = "spec"
)

// Job is a workflow's input: small, and nothing secret.
type Job struct {
	Kind string
	// Name is what progress lines call the job (the spec id, the message).
	Name string
	// Remote is the git URL workers clone and push to.
	Remote string
	// BaseRef is the ref on Remote that holds Base, the starting commit.
	BaseRef string
	Base    string
	// Branch is pushed back to Remote with the result.
	Branch string
	// Args are ralph's arguments on the worker, run in the worktree
	// (e.g. run --agent script --script s.json "message").
	Args []string
	// HeartbeatTimeout: an attempt not heard from for this long is
	// retried elsewhere (default 30s).
	HeartbeatTimeout time.Duration
	// MaxAttempts bounds the attempts (default 5).
	MaxAttempts int
}

// Answer resolves the <Human> request ID of attempt Attempt.
type Answer struct {
	Attempt  int32
	ID       int64
	Status   string // approved or rejected
	Response string
}

// Request is a <Human> request an attempt waits on.
type Request struct {
	ID      int64
	Type    string
	Prompt  string
	Options []string
}

// Pending is what an attempt waits on now.
type Pending struct {
	Attempt  int32
	Requests []Request
}

// Result is what an attempt produced.
type Result struct {
	// ExitCode is ralph's exit code on the worker (0 completed).
	ExitCode int
	// Commit is the head of Branch as pushed; empty when nothing was.
	Commit string
	Branch string
	// Worker names the worker that ran the attempt.
	Worker string
	// Transcript references the attempt's store on that worker:
	// WORKER:PATH (the SQLite database holding the event stream).
	Transcript string
	// Tail is the end of ralph's output on the worker.
	Tail string
}

// Status is what the status query answers.
type Status struct {
	Job      Job
	Pending  Pending
	Answers  []Answer
	Stop     string
	Done     bool
	Result   *Result
	Error    string
	Attempts int
	// Restarts says, one line each, why a task started again in a new
	// session (its worker was lost).
	Restarts []string
}

// Progress is an attempt's heartbeat detail.
type Progress struct {
	Worker    string
	Attempt   int32
	Iteration int
	Events    int
	// Phase is the latest state of the run (iteration phase, spec state).
	Phase string
}

// JobWorkflow runs job's activity with heartbeats and retries, keeping
// the <Human> answers and the stop request the activity asks for.
func JobWorkflow(ctx workflow.Context, job Job) (Result, error) {
	st := &Status{Job: job}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return *st, nil }); err != nil {
		return Result{}, fmt.Errorf("query handler: %w", err)
	}
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
	hb := job.HeartbeatTimeout
	if hb <= 0 {
		hb = 30 * time.Second
	}
	attempts := job.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 7 * 24 * time.Hour,
		HeartbeatTimeout:    hb,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    int32(attempts),
		},
	})
	var res Result
	err := workflow.ExecuteActivity(ctx, ActivityName, job).Get(ctx, &res)
	st.Done = true
	if err != nil {
		st.Error = err.Error()
		return Result{}, err
	}
	st.Result = &res
	return res, nil
}

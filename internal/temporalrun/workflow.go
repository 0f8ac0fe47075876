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
	// StepActivityName runs one step (one agent call) of a spec.
	StepActivityName = "ralph.SpecStep"
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
	// MaxAttempts bounds the attempts of one activity (default 5): a
	// worker lost counts as one.
	MaxAttempts int
	// StepAttempts is how many failed steps (planner, implementer, gates
	// or verifier) a spec may have: the pipeline's max attempts (default
	// 3). KindSpec only.
	StepAttempts int
	// Backoff is the wait before a spec's first retry, doubled for each
	// further one, capped at 5 minutes. KindSpec only.
	Backoff time.Duration
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
	// CreatedAt is when the run asked; zero from a worker older than it.
	CreatedAt time.Time
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
	// Reason says why a spec failed.
	Reason string `json:",omitempty"`
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
	// Spec is a spec workflow's own state; nil for a task.
	Spec *SpecStatus `json:",omitempty"`
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
	keepSignals(ctx, st)
	ctx = workflow.WithActivityOptions(ctx, activityOptions(job))
	// Workflows started before specs ran step by step replay as they ran:
	// one RunJob activity for the whole spec.
	if job.Kind == KindSpec && workflow.GetVersion(ctx, "spec-steps", workflow.DefaultVersion, 1) == 1 {
		res, err := specWorkflow(ctx, job, st)
		st.Done = true
		if err != nil {
			st.Error = err.Error()
			return Result{}, err
		}
		st.Result = &res
		return res, nil
	}
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

// maxActivity bounds one activity's run.
const maxActivity = 7 * 24 * time.Hour

// activityOptions: an activity not heard from within the heartbeat
// timeout is retried elsewhere, up to job.MaxAttempts times.
func activityOptions(job Job) workflow.ActivityOptions {
	hb := job.HeartbeatTimeout
	if hb <= 0 {
		hb = 30 * time.Second
	}
	attempts := job.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: maxActivity,
		HeartbeatTimeout:    hb,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    int32(attempts),
		},
	}
}

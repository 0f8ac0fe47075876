package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Started says how Start found the workflow.
type Started struct {
	ID, RunID string
	// Attached is true when a workflow with the id was running, or had
	// completed with a run that succeeded, and Start joined it instead of
	// starting one.
	Attached bool
}

// Start starts job as workflow id on queue, or attaches to the workflow
// with that id when one runs or completed with exit code 0: a rerun never
// duplicates work. A workflow whose run failed (a non-zero exit, an
// error, a cancel or a termination) is started again.
func Start(ctx context.Context, c client.Client, queue, id string, job Job) (Started, error) {
	return start(ctx, c, queue, id, WorkflowName, job)
}

// StartTask is Start for a ralph run --temporal task: workflow ralph.Task
// (TaskWorkflow), one activity per iteration in a session.
func StartTask(ctx context.Context, c client.Client, queue, id string, job Job) (Started, error) {
	return start(ctx, c, queue, id, TaskWorkflowName, job)
}

func start(ctx context.Context, c client.Client, queue, id, workflow string, job Job) (Started, error) {
	if d, err := c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
		info := d.GetWorkflowExecutionInfo()
		runID := info.GetExecution().GetRunId()
		switch info.GetStatus() {
		case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return Started{ID: id, RunID: runID, Attached: true}, nil
		case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
			var res Result
			if err := c.GetWorkflow(ctx, id, runID).Get(ctx, &res); err == nil && res.ExitCode == 0 {
				return Started{ID: id, RunID: runID, Attached: true}, nil
			}
		}
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                queue,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, workflow, job)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		// Another submitter started it a moment ago.
		run = c.GetWorkflow(ctx, id, "")
		return Started{ID: id, RunID: run.GetRunID(), Attached: true}, nil
	}
	if err != nil {
		return Started{}, fmt.Errorf("start workflow %s: %w", id, err)
	}
	return Started{ID: id, RunID: run.GetRunID()}, nil
}

// The Go SDK's activities that hold a session open on its worker and
// close it.
const (
	sessionCreationActivity   = "internalSessionCreationActivity"
	sessionCompletionActivity = "internalSessionCompletionActivity"
)

// Snapshot is a workflow's state as a person sees it.
type Snapshot struct {
	Status
	// Running is the attempt in progress, from its last heartbeat.
	Running *Progress
	// Closed is the workflow's close status, empty while it runs.
	Closed string
	// SilentSince is when the worker running the attempt was last heard
	// from, set once that is more than silentAfter ago: it may be lost,
	// which the cluster decides when the heartbeat timeout passes.
	SilentSince time.Time
}

// silentAfter is how long a running attempt's worker may go without a
// heartbeat before a Snapshot says so; a live one beats every second or
// two.
const silentAfter = 10 * time.Second

// silentSince is when a's worker was last heard from, or zero when a is
// not running or was heard from within silentAfter of now.
func silentSince(a *workflowpb.PendingActivityInfo, now time.Time) time.Time {
	if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
		return time.Time{}
	}
	var last time.Time
	if st := a.GetLastStartedTime(); st != nil {
		last = st.AsTime()
	}
	if hb := a.GetLastHeartbeatTime(); hb != nil && hb.AsTime().After(last) {
		last = hb.AsTime()
	}
	if last.IsZero() || now.Sub(last) < silentAfter {
		return time.Time{}
	}
	return last
}

// Describe queries workflow id and reads its pending attempt's heartbeat.
func Describe(ctx context.Context, c client.Client, id string) (Snapshot, error) {
	var s Snapshot
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return s, fmt.Errorf("describe workflow %s: %w", id, err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		s.Closed = st.String()
	}
	for _, a := range d.GetPendingActivities() {
		if n := a.GetActivityType().GetName(); n == sessionCreationActivity || n == sessionCompletionActivity {
			continue // a task's session, not its work
		}
		var p Progress
		if hd := a.GetHeartbeatDetails(); hd != nil && len(hd.GetPayloads()) > 0 {
			_ = converter.GetDefaultDataConverter().FromPayloads(hd, &p)
		}
		switch a.GetActivityType().GetName() {
		case TaskPrepareActivity, TaskIterationActivity, TaskFinishActivity:
			// A task's activities heartbeat their attempt (the session);
			// before the first heartbeat it is the workflow's.
		default:
			p.Attempt = a.GetAttempt()
		}
		if p.Worker == "" {
			p.Worker = a.GetLastWorkerIdentity()
		}
		s.Running = &p
		s.SilentSince = silentSince(a, time.Now())
	}
	q, err := c.QueryWorkflow(ctx, id, "", QueryStatus)
	if err != nil {
		return s, fmt.Errorf("query workflow %s: %w", id, err)
	}
	if err := q.Get(&s.Status); err != nil {
		return s, fmt.Errorf("query workflow %s: %w", id, err)
	}
	if s.Running != nil && s.Running.Attempt == 0 {
		s.Running.Attempt = int32(s.Attempts)
	}
	return s, nil
}

// describeTimeout bounds one look at a workflow while Wait follows it.
const describeTimeout = 10 * time.Second

// healthTimeout bounds the check that tells a cluster that does not
// answer from a workflow whose status query is slow.
const healthTimeout = 5 * time.Second

// Wait waits for workflow id's result, calling each with a Snapshot
// every period while it runs. When the cluster stops answering it calls
// reach once with the error, and once with nil when it answers again;
// reach may be nil.
func Wait(ctx context.Context, c client.Client, id string, period time.Duration, each func(Snapshot), reach func(error)) (Result, error) {
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		err = c.GetWorkflow(ctx, id, "").Get(ctx, &res)
	}()
	t := time.NewTicker(period)
	defer t.Stop()
	down := false
	for {
		select {
		case <-done:
			return res, err
		case <-t.C:
			dctx, cancel := context.WithTimeout(ctx, describeTimeout)
			s, derr := Describe(dctx, c, id)
			cancel()
			switch {
			case derr == nil:
				if down && reach != nil {
					reach(nil)
				}
				down = false
				if each != nil {
					each(s)
				}
			case !down && ctx.Err() == nil && !reachable(ctx, c):
				down = true
				if reach != nil {
					reach(derr)
				}
			}
		}
	}
}

// reachable reports whether the cluster answers a health check.
func reachable(ctx context.Context, c client.Client) bool {
	hctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	_, err := c.CheckHealth(hctx, &client.CheckHealthRequest{})
	return err == nil
}

// SendAnswer signals workflow id that request reqID of its current attempt
// was answered.
func SendAnswer(ctx context.Context, c client.Client, id string, reqID int64, status, response string) (Request, error) {
	s, err := Describe(ctx, c, id)
	if err != nil {
		return Request{}, err
	}
	for _, r := range s.Pending.Requests {
		if r.ID == reqID {
			a := Answer{Attempt: s.Pending.Attempt, ID: reqID, Status: status, Response: response}
			if err := c.SignalWorkflow(ctx, id, "", SignalAnswer, a); err != nil {
				return r, fmt.Errorf("signal workflow %s: %w", id, err)
			}
			return r, nil
		}
	}
	return Request{}, fmt.Errorf("workflow %s has %w %d", id, ErrNoRequest, reqID)
}

// ErrNoRequest means the workflow waits on no request with that id.
var ErrNoRequest = errors.New("no pending request")

// Stop signals workflow id to stop after its current iteration.
func Stop(ctx context.Context, c client.Client, id, reason string) error {
	if err := c.SignalWorkflow(ctx, id, "", SignalStop, reason); err != nil {
		return fmt.Errorf("signal workflow %s: %w", id, err)
	}
	return nil
}

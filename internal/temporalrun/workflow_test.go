package temporalrun

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
)

// The workflow keeps the pending requests an attempt reports, the answers
// and the stop request it is sent, and answers them in its status query;
// a failed attempt is retried up to MaxAttempts.
func TestJobWorkflowSignalsAndRetries(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	calls := 0
	env.RegisterActivityWithOptions(func(ctx context.Context, job Job) (Result, error) {
		calls++
		if calls == 1 {
			return Result{}, errors.New("worker lost")
		}
		return Result{ExitCode: 0, Commit: "abc", Branch: job.Branch, Worker: "w2"}, nil
	}, activity.RegisterOptions{Name: ActivityName})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalPending, Pending{Attempt: 1, Requests: []Request{{ID: 1, Prompt: "Deploy?"}}})
		env.SignalWorkflow(SignalAnswer, Answer{Attempt: 1, ID: 1, Status: "approved"})
		env.SignalWorkflow(SignalStop, "")
	}, 0)
	queried := false
	env.RegisterDelayedCallback(func() {
		queried = true
		v, err := env.QueryWorkflow(QueryStatus)
		if err != nil {
			t.Fatal(err)
		}
		var st Status
		if err := v.Get(&st); err != nil {
			t.Fatal(err)
		}
		if len(st.Pending.Requests) != 1 || st.Pending.Requests[0].Prompt != "Deploy?" {
			t.Errorf("pending = %+v", st.Pending)
		}
		if len(st.Answers) != 1 || st.Answers[0].Status != "approved" {
			t.Errorf("answers = %+v", st.Answers)
		}
		if st.Stop != "stopped by the user" {
			t.Errorf("stop = %q", st.Stop)
		}
	}, 500*time.Millisecond)
	env.ExecuteWorkflow(JobWorkflow, Job{Kind: KindTask, Branch: "ralph/task/x", MaxAttempts: 3, HeartbeatTimeout: time.Second})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !queried {
		t.Error("the status query never ran while the workflow waited to retry")
	}
	if calls != 2 || res.Worker != "w2" || res.Commit != "abc" {
		t.Errorf("calls = %d, result = %+v", calls, res)
	}
}

package temporalrun

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/store"
)

// specEnv runs the spec workflow with step as its ralph.SpecStep activity;
// it records every input.
type specEnv struct {
	env    *testsuite.TestWorkflowEnvironment
	inputs []StepInput
	start  time.Time
}

func newSpecEnv(t *testing.T, step func(n int, in StepInput) StepResult) *specEnv {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	e := &specEnv{env: s.NewTestWorkflowEnvironment()}
	e.start = e.env.Now()
	e.env.RegisterActivityWithOptions(func(ctx context.Context, in StepInput) (StepResult, error) {
		e.inputs = append(e.inputs, in)
		out := step(len(e.inputs), in)
		out.Worker = "w1"
		if out.Commit == "" {
			out.Commit = in.Head + "+"
		}
		return out, nil
	}, activity.RegisterOptions{Name: StepActivityName})
	return e
}

func (e *specEnv) run(t *testing.T, job Job) Result {
	t.Helper()
	job.Kind, job.Name, job.Branch, job.Base = KindSpec, "0001-a", "ralph/spec/0001-a", "base"
	e.env.ExecuteWorkflow(JobWorkflow, job)
	if !e.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := e.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := e.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *specEnv) status(t *testing.T) Status {
	t.Helper()
	v, err := e.env.QueryWorkflow(QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// Every step is one activity from the head and record the last one left;
// a failed step is counted, the next one waits the backoff (doubled) on a
// timer, and the spec fails once it is out of attempts.
func TestSpecWorkflowCountsFailuresAndBacksOff(t *testing.T) {
	e := newSpecEnv(t, func(n int, in StepInput) StepResult {
		rec := in.Record
		rec.ImplAttempts++
		return StepResult{Step: "implement", Record: rec, Problem: "gates failed"}
	})
	var retryAt []time.Duration
	var failures []int
	for _, at := range []time.Duration{5 * time.Second, 15 * time.Second} {
		e.env.RegisterDelayedCallback(func() {
			st := e.status(t)
			retryAt = append(retryAt, st.Spec.Retry.Sub(e.start))
			failures = append(failures, st.Spec.Failures)
		}, at)
	}
	res := e.run(t, Job{StepAttempts: 3, Backoff: 10 * time.Second})
	if res.ExitCode != 1 || res.Reason != "gates failed (after 3 failed attempts)" || res.Commit != "base+++" || res.Worker != "w1" {
		t.Errorf("result = %+v", res)
	}
	if len(e.inputs) != 3 {
		t.Fatalf("%d steps ran, want 3", len(e.inputs))
	}
	for i, in := range e.inputs {
		if in.N != i+1 || in.Record.ImplAttempts != i || in.Head != "base"+strings.Repeat("+", i) {
			t.Errorf("step %d input = %+v", i+1, in)
		}
	}
	// Retries at 10s, then 10s+20s.
	if len(retryAt) != 2 || retryAt[0] != 10*time.Second || retryAt[1] != 30*time.Second || failures[0] != 1 || failures[1] != 2 {
		t.Errorf("retries due at %v with failures %v, want [10s 30s] [1 2]", retryAt, failures)
	}
	if got := e.env.Now().Sub(e.start); got < 30*time.Second {
		t.Errorf("the workflow took %s of workflow time, want the backoff's 30s", got)
	}
}

// A failed verification's feedback reaches the next implement step, and
// a done step ends the workflow with the branch's head.
func TestSpecWorkflowCarriesTheRecord(t *testing.T) {
	steps := []StepResult{
		{Step: "plan", Record: store.SpecRecord{ID: "0001-a.md", PlanAttempt: 1}},
		{Step: "implement", Record: store.SpecRecord{ID: "0001-a.md", PlanAttempt: 1, ImplAttempts: 1}},
		{Step: "verify", Record: store.SpecRecord{ID: "0001-a.md", PlanAttempt: 1, ImplAttempts: 1, VerifyAttempts: 1, Feedback: "lacks bar"}, Problem: "verifier rejected"},
		{Step: "implement", Record: store.SpecRecord{ID: "0001-a.md", PlanAttempt: 1, ImplAttempts: 2, VerifyAttempts: 1}},
		{Step: "verify", Record: store.SpecRecord{ID: "0001-a.md", State: "done"}, Done: true, Commit: "tip"},
	}
	e := newSpecEnv(t, func(n int, in StepInput) StepResult { return steps[n-1] })
	res := e.run(t, Job{})
	if res.ExitCode != 0 || res.Commit != "tip" || res.Branch != "ralph/spec/0001-a" {
		t.Errorf("result = %+v", res)
	}
	if len(e.inputs) != 5 || e.inputs[3].Record.Feedback != "lacks bar" {
		t.Errorf("the second implement step did not get the feedback: %+v", e.inputs)
	}
}

// A step at a <Human> with no answer ends; the workflow waits for the
// answer signal with no activity running, then runs the step again with
// the answer by key. With no answer the <Human>'s timeout answers
// "timeout".
func TestSpecWorkflowWaitsForAHuman(t *testing.T) {
	need := &spec.HumanNeed{Key: "spec:0001-a.md:plan-1:entry-0", Type: "confirmation", Prompt: "Deploy?", Timeout: time.Hour}
	for _, tc := range []struct {
		name   string
		answer string
		want   string
		code   int
	}{{"approved", store.HumanApproved, store.HumanApproved, 0}, {"timeout", "", store.HumanTimeout, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSpecEnv(t, func(n int, in StepInput) StepResult {
				if len(in.Answers) == 0 {
					return StepResult{Step: "implement", NeedHuman: need}
				}
				if in.Answers[0].Status != store.HumanApproved {
					return StepResult{Step: "implement", Rejected: "request 1 timed out"}
				}
				return StepResult{Step: "verify", Done: true}
			})
			var waiting Status
			steps := 0
			e.env.RegisterDelayedCallback(func() {
				waiting, steps = e.status(t), len(e.inputs)
				if tc.answer != "" {
					e.env.SignalWorkflow(SignalAnswer, Answer{ID: waiting.Pending.Requests[0].ID, Status: tc.answer, Response: "go"})
				}
			}, 10*time.Minute)
			res := e.run(t, Job{})
			if len(waiting.Pending.Requests) != 1 || waiting.Pending.Requests[0].ID != 1 || waiting.Pending.Requests[0].Prompt != "Deploy?" || steps != 1 {
				t.Fatalf("while waiting: %d steps ran, pending %+v", steps, waiting.Pending)
			}
			if len(e.inputs) != 2 || len(e.inputs[1].Answers) != 1 || e.inputs[1].Answers[0].Key != need.Key || e.inputs[1].Answers[0].Status != tc.want {
				t.Fatalf("inputs = %+v", e.inputs)
			}
			if res.ExitCode != tc.code {
				t.Errorf("result = %+v", res)
			}
			elapsed := e.env.Now().Sub(e.start)
			if tc.answer == "" && elapsed < time.Hour {
				t.Errorf("the timeout answered after %s, want the <Human>'s hour", elapsed)
			}
			if tc.answer != "" && elapsed >= time.Hour {
				t.Errorf("the answer was taken after %s", elapsed)
			}
			if st := e.status(t); len(st.Pending.Requests) != 0 {
				t.Errorf("a request is still pending after the answer: %+v", st.Pending)
			}
		})
	}
}

// ralph stop is a signal: a spec backing off after a failure ends stopped
// at once, without another step.
func TestSpecWorkflowStopsDuringBackoff(t *testing.T) {
	e := newSpecEnv(t, func(n int, in StepInput) StepResult {
		return StepResult{Step: "plan", Problem: "no plan written"}
	})
	e.env.RegisterDelayedCallback(func() { e.env.SignalWorkflow(SignalStop, "enough") }, time.Minute)
	res := e.run(t, Job{StepAttempts: 3, Backoff: time.Hour})
	if res.ExitCode != ExitStopped || res.Reason != "stopped: enough" || len(e.inputs) != 1 {
		t.Errorf("result = %+v after %d steps", res, len(e.inputs))
	}
	if got := e.env.Now().Sub(e.start); got >= time.Hour {
		t.Errorf("the stop took effect after %s, not during the hour's backoff", got)
	}
}

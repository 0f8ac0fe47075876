package temporalrun

// A spec's workflow runs the pipeline's loop itself: each step (one agent
// call: plan, implement or verify) is one ralph.SpecStep activity on some
// worker, started from the branch head the previous step pushed and the
// spec's record the workflow holds. The workflow counts failed steps,
// waits the backoff on a durable timer, gives up after StepAttempts, and
// waits for a <Human>'s answer with no activity running.

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/store"
)

// ExitStopped is a stopped spec's exit code (as ralph run's).
const ExitStopped = 8

// HumanAnswer is the answer to a spec's <Human>, by its request key.
type HumanAnswer struct {
	Key      string
	Status   string // approved, rejected or timeout
	Response string `json:",omitempty"`
}

// StepInput is a ralph.SpecStep activity's input: everything the step
// needs, so a step retried on another worker does the same.
type StepInput struct {
	Job Job
	// N numbers the step in its workflow, from 1.
	N int
	// Record is the spec's record before the step.
	Record store.SpecRecord
	// Head is the commit the step starts from (Job.Base at first).
	Head string
	// Answers are the <Human> answers known so far.
	Answers []HumanAnswer `json:",omitempty"`
}

// StepResult is what one step did.
type StepResult struct {
	// Step is the step that ran: plan, implement, verify (or done).
	Step      string
	Record    store.SpecRecord
	Problem   string          `json:",omitempty"`
	Rejected  string          `json:",omitempty"`
	NeedHuman *spec.HumanNeed `json:",omitempty"`
	Done      bool            `json:",omitempty"`
	// Commit is the branch's new head, as pushed.
	Commit string
	Worker string
	// Transcript references the step's store and logs: WORKER:PATH.
	Transcript string
	Events     int
	CostUSD    float64
}

// SpecStatus is a spec workflow's state, in its status query.
type SpecStatus struct {
	Record store.SpecRecord
	Head   string
	// Steps counts the steps started; LastStep names the last one's kind.
	Steps    int
	LastStep string `json:",omitempty"`
	// Failures counts failed steps, out of MaxFailures.
	Failures, MaxFailures int
	Answers               []HumanAnswer `json:",omitempty"`
	// Events counts the agent events of the steps that ended.
	Events int
	// Retry is when the next step starts after a failure (zero: not
	// backing off).
	Retry time.Time `json:",omitzero"`
}

// stepBackoff is the wait before retry number n: base doubled for each
// retry after the first, capped at 5 minutes (the pipeline's rule).
func stepBackoff(base time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

func specWorkflow(ctx workflow.Context, job Job, st *Status) (Result, error) {
	maxFail := job.StepAttempts
	if maxFail <= 0 {
		maxFail = 3
	}
	sp := &SpecStatus{Head: job.Base, MaxFailures: maxFail}
	st.Spec = sp
	res := Result{Branch: job.Branch}
	end := func(code int, reason string) (Result, error) {
		res.ExitCode, res.Reason, res.Commit = code, reason, sp.Head
		return res, nil
	}
	var lastReq int64
	for {
		if st.Stop != "" {
			return end(ExitStopped, "stopped: "+st.Stop)
		}
		sp.Steps++
		in := StepInput{Job: job, N: sp.Steps, Record: sp.Record, Head: sp.Head, Answers: sp.Answers}
		var out StepResult
		if err := workflow.ExecuteActivity(ctx, StepActivityName, in).Get(ctx, &out); err != nil {
			return Result{}, err
		}
		sp.Record, sp.LastStep = out.Record, out.Step
		sp.Events += out.Events
		if out.Commit != "" {
			sp.Head = out.Commit
		}
		res.Worker, res.Transcript = out.Worker, out.Transcript
		switch {
		case out.NeedHuman != nil:
			need := out.NeedHuman
			lastReq++
			req := Request{ID: lastReq, Type: need.Type, Prompt: need.Prompt, Options: need.Options, CreatedAt: workflow.Now(ctx)}
			st.Pending = Pending{Requests: []Request{req}}
			timeout := need.Timeout
			if timeout <= 0 {
				timeout = engine.DefaultHumanTimeout
			}
			var got *Answer
			answered, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool {
				for i := range st.Answers {
					if st.Answers[i].ID == req.ID {
						got = &st.Answers[i]
						return true
					}
				}
				return st.Stop != ""
			})
			st.Pending = Pending{}
			if err != nil {
				return Result{}, err
			}
			if got == nil && st.Stop != "" {
				return end(ExitStopped, "stopped: "+st.Stop)
			}
			a := HumanAnswer{Key: need.Key, Status: store.HumanTimeout}
			if answered && got != nil {
				a.Status, a.Response = got.Status, got.Response
			}
			sp.Answers = append(sp.Answers, a)
		case out.Rejected != "":
			return end(1, out.Rejected)
		case out.Done:
			return end(0, "")
		case out.Problem != "":
			sp.Failures++
			if sp.Failures >= maxFail {
				return end(1, fmt.Sprintf("%s (after %d failed attempts)", out.Problem, sp.Failures))
			}
			if d := stepBackoff(job.Backoff, sp.Failures); d > 0 {
				// A durable timer; a stop request cuts it short.
				sp.Retry = workflow.Now(ctx).Add(d)
				if _, err := workflow.AwaitWithTimeout(ctx, d, func() bool { return st.Stop != "" }); err != nil {
					return Result{}, err
				}
				sp.Retry = time.Time{}
			}
		}
	}
}

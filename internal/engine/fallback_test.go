package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
)

// namedAgent is an agentFunc with a name and a count of its runs.
type namedAgent struct {
	name string
	runs int
	fn   func(n int) (agent.Result, error)
}

func (a *namedAgent) Name() string { return a.name }
func (a *namedAgent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	a.runs++
	return a.fn(a.runs)
}

// The fallback chain: a backend that runs out (a limit lifting later than
// max_wait, or a used-up quota with no time) hands the next iteration to
// the next backend; a brief rate limit is waited out on the same backend,
// and an ordinary failure never switches.
func TestFallbackOnExhaustion(t *testing.T) {
	for _, tc := range []struct {
		name          string
		err           error
		want          Reason
		primaryRuns   int
		fallbackRuns  int
		fallbackEvent bool
	}{
		{"usage limit beyond max_wait", &agent.RateLimitError{ResetAt: time.Now().Add(5 * time.Hour), Message: "usage limit reached"},
			Completed, 1, 1, true},
		{"quota with no reset", &agent.RateLimitError{Message: "You exceeded your current quota, please check your plan and billing details."},
			Completed, 1, 1, true},
		{"brief rate limit is waited out", &agent.RateLimitError{ResetAt: time.Now().Add(time.Second), Message: "429 Too Many Requests"},
			Completed, 2, 0, false},
		{"ordinary failure never switches", errors.New("the model exploded"),
			AgentError, 3, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, st := newBenchWorkspace(t, 1)
			primary := &namedAgent{name: "claude", fn: func(n int) (agent.Result, error) {
				if n == 1 || tc.want == AgentError {
					return agent.Result{}, tc.err
				}
				return doneAgent.Run(context.Background(), agent.Request{Dir: ws.Root}, func(agent.Event) {})
			}}
			next := &namedAgent{name: "codex", fn: func(int) (agent.Result, error) {
				res, err := doneAgent.Run(context.Background(), agent.Request{Dir: ws.Root}, func(agent.Event) {})
				res.Usage = agent.Usage{InputTokens: 100, CostUSD: 0.25}
				return res, err
			}}
			out, err := New(ws, st, Options{Agent: primary, Fallbacks: []agent.Agent{next},
				Limits: Limits{MaxIterations: 5, MaxWait: time.Hour}}).Run(context.Background(), "add two drinks")
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != tc.want || primary.runs != tc.primaryRuns || next.runs != tc.fallbackRuns {
				t.Fatalf("ended %s (%s), claude ran %d times, codex %d; want %s, %d, %d",
					out.Reason, out.Detail, primary.runs, next.runs, tc.want, tc.primaryRuns, tc.fallbackRuns)
			}
			tk, _ := st.LatestTask(context.Background())
			evs, _ := st.EventsAfter(context.Background(), tk.ID, 0, 1000)
			var fell bool
			for _, e := range evs {
				fell = fell || e.Kind == "fallback" && strings.Contains(e.Text, "claude ran out") && strings.Contains(e.Text, "runs on codex")
			}
			if fell != tc.fallbackEvent {
				t.Errorf("fallback event = %v, want %v", fell, tc.fallbackEvent)
			}
			if tc.fallbackRuns > 0 {
				its, _ := st.Iterations(context.Background(), tk.ID)
				if len(its) != 2 || its[0].Outcome != "agent-exhausted" || its[1].CostUSD != 0.25 || tk.CostUSD != 0.25 {
					t.Errorf("iterations = %+v, task cost %v", its, tk.CostUSD)
				}
			}
		})
	}
}

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// workAgent makes one change per iteration (never a stall, never a
// completion) and reports cost dollars spent; tick, when set, runs first.
func workAgent(cost float64, tick func()) agent.Agent {
	return agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if tick != nil {
			tick()
		}
		emit(agent.Event{Kind: agent.KindToolCall, Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"path":"work.txt","n":%d}`, req.Iteration))})
		err := os.WriteFile(filepath.Join(req.Dir, "work.txt"), []byte(fmt.Sprint(req.Iteration)), 0o644)
		return agent.Result{ToolCalls: 1, Final: "working", Usage: agent.Usage{CostUSD: cost}}, err
	})
}

// Each limit ends the run when it is reached exactly, not one iteration
// later: two iterations of the limit's worth.
func TestLimitsAtTheirExactBoundaries(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	minutePerIteration := func() {
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
	}
	tests := []struct {
		name   string
		agent  agent.Agent
		limits Limits
		now    func() time.Time
		want   Reason
	}{
		{"iterations", workAgent(0, nil), Limits{MaxIterations: 2}, nil, MaxIterations},
		{"cost landing exactly on the cap", workAgent(0.25, nil), Limits{MaxIterations: 5, MaxCost: 0.5}, nil, MaxCost},
		{"duration", workAgent(0, minutePerIteration), Limits{MaxIterations: 5, MaxDuration: 2 * time.Minute}, clock, MaxDuration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, st := newBenchWorkspace(t, 1)
			out, err := New(ws, st, Options{Agent: tt.agent, Limits: tt.limits, Now: tt.now}).Run(context.Background(), "make progress")
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != tt.want || out.Iterations != 2 {
				t.Errorf("ended %s after %d iterations, want %s after 2: %s", out.Reason, out.Iterations, tt.want, out.Detail)
			}
		})
	}
}

// claimAgent asks to finish every iteration without writing summary.md,
// so that the has-summary gate fails each time.
var claimAgent = agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	return agent.Result{Final: "done <promise>COMPLETE</promise>"}, nil
})

// The gate-failure limit ends the run at exactly that many failures in a
// row; unset, it is 5. The agent-error limit likewise; unset, it is 3.
func TestFailureLimits(t *testing.T) {
	failing := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		return agent.Result{}, errors.New("the model refused")
	})
	tests := []struct {
		name   string
		agent  agent.Agent
		limits Limits
		want   Reason
		its    int
	}{
		{"gate failures", claimAgent, Limits{MaxIterations: 10, GateFailures: 2}, GateFailures, 2},
		{"gate failures by default", claimAgent, Limits{MaxIterations: 10}, GateFailures, 5},
		{"agent errors by default", failing, Limits{MaxIterations: 10}, AgentError, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, st := newBenchWorkspace(t, 1)
			opt := Options{Agent: tt.agent, Gates: []gate.Gate{gate.HasSummary{}}, Limits: tt.limits}
			out, err := New(ws, st, opt).Run(context.Background(), "write the docs")
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != tt.want || out.Iterations != tt.its {
				t.Errorf("ended %s after %d iterations, want %s after %d: %s", out.Reason, out.Iterations, tt.want, tt.its, out.Detail)
			}
		})
	}
}

// stepAgent walks a two-step plan: iteration 1 writes the plan; then each
// iteration either finishes the current step (summary and status) or
// only claims to (status alone, which the has-summary gate fails), as
// pass says; cancel, when set, is called in that iteration instead.
func stepAgent(pass map[int]bool, cancelAt int, cancel func()) agent.Agent {
	return agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		write := func(rel, content string) error {
			emit(agent.Event{Kind: agent.KindToolCall, Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"path":%q}`, rel))})
			return workspace.WriteFile(filepath.Join(req.Dir, rel), []byte(content))
		}
		switch n := req.Iteration; {
		case n == cancelAt:
			cancel()
			return agent.Result{}, ctx.Err()
		case n == 1:
			plan, err := os.ReadFile(filepath.Join(req.Dir, "plan-src.tsx"))
			if err != nil {
				return agent.Result{}, err
			}
			return agent.Result{ToolCalls: 1, Final: "planned"}, write(".ralph/plan.tsx", string(plan))
		case pass[n]:
			if err := write(fmt.Sprintf("step%d.txt", n), "done"); err != nil {
				return agent.Result{}, err
			}
			if err := write(".ralph/summary.md", fmt.Sprintf("Did iteration %d\n", n)); err != nil {
				return agent.Result{}, err
			}
		}
		return agent.Result{ToolCalls: 1, Final: "done"}, write(".ralph/status.txt", "complete")
	})
}

const twoSteps = `<Plan name="two steps">
  <Phase name="Build">
    <Step name="One">Write step one</Step>
    <Step name="Two">Write step two</Step>
  </Phase>
</Plan>`

// A step that passes its gates ends the gate-failure streak: failures
// before it do not count against the next step.
func TestPassedStepResetsGateFailureStreak(t *testing.T) {
	h := newHarness(t, twoSteps, 0)
	h.opt.Agent = stepAgent(map[int]bool{3: true, 5: true}, 0, nil)
	h.opt.Limits.GateFailures = 2
	out, err := h.engine().Run(context.Background(), "run the plan")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed || out.Iterations != 5 {
		t.Fatalf("ended %s after %d iterations, want completed after 5: %s", out.Reason, out.Iterations, out.Detail)
	}
}

// A resumed task counts its gate-failure streak from its last passed
// step, as the run before it did.
func TestResumedGateFailureStreakStartsAtLastPassedStep(t *testing.T) {
	h := newHarness(t, twoSteps, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.opt.Agent = stepAgent(map[int]bool{3: true, 7: true}, 5, cancel)
	h.opt.Limits.GateFailures = 3
	out, err := h.engine().Run(ctx, "run the plan")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Interrupted {
		t.Fatalf("first run ended %s: %s", out.Reason, out.Detail)
	}
	out, err = h.engine().Resume(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed || out.Iterations != 7 {
		t.Fatalf("resumed run ended %s after %d iterations, want completed after 7: %s", out.Reason, out.Iterations, out.Detail)
	}
}

// In the PLAN phase with no plan written, a completion claim is judged by
// the gates at once, not deferred to a plan check that has nothing to
// check.
func TestCompletionInPlanWithoutPlanRunsGates(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	opt := Options{Agent: claimAgent, Gates: []gate.Gate{gate.HasSummary{}}, Limits: Limits{MaxIterations: 4, GateFailures: 1}}
	out, err := New(ws, st, opt).Run(context.Background(), "write the docs")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != GateFailures || out.Iterations != 1 {
		t.Fatalf("ended %s after %d iterations, want gate-failures after 1: %s", out.Reason, out.Iterations, out.Detail)
	}
}

// The completion promise counts only at the very end of the final
// message: quoted in the middle, it is no claim.
func TestPromiseOnlyAtTheEnd(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	quoting := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		res, err := workAgent(0, nil).Run(ctx, req, emit)
		res.Final = "I will say <promise>COMPLETE</promise> when the work is done; not yet."
		return res, err
	})
	out, err := New(ws, st, Options{Agent: quoting, Limits: Limits{MaxIterations: 2}}).Run(context.Background(), "make progress")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != MaxIterations {
		t.Fatalf("ended %s after %d iterations, want max-iterations: %s", out.Reason, out.Iterations, out.Detail)
	}
}

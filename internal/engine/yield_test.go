package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// A task run with YieldAfter returns every N iterations with Yielded (exit
// code 13), leaving the task open; resumed until it ends, it ends as the
// same task run in one go does: after the same iterations, numbered
// without a gap, for the same reason. The counts that span iterations —
// the gate-failure streak, stall detection and its recovery, the time
// spent — go on across the yields.
func TestYieldAfterEndsAsOneRun(t *testing.T) {
	// builds writes a new file every iteration and finishes in the fourth.
	builds := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		name := fmt.Sprintf("part%d.txt", req.Iteration)
		emit(agent.Event{Kind: agent.KindToolCall, Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"path":%q}`, name))})
		if err := workspace.WriteFile(req.Dir+"/"+name, []byte("x")); err != nil {
			return agent.Result{}, err
		}
		if req.Iteration < 4 {
			return agent.Result{ToolCalls: 1, Final: "more to do"}, nil
		}
		if err := workspace.WriteFile(req.Dir+"/.ralph/summary.md", []byte("Built four parts\n")); err != nil {
			return agent.Result{}, err
		}
		return agent.Result{ToolCalls: 1, Final: "done <promise>COMPLETE</promise>"}, nil
	})
	// claims asks to finish every iteration without a summary: the gates
	// fail each time.
	claims := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		return agent.Result{Final: "done <promise>COMPLETE</promise>"}, nil
	})
	// stuck makes the same call every iteration, changing nothing: a stall
	// every third iteration; the second ends the task.
	stuck := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		emit(agent.Event{Kind: agent.KindToolCall, Tool: "read", Input: json.RawMessage(`{"path":"src/pkg0/file0.go"}`)})
		return agent.Result{ToolCalls: 1, Final: "still looking"}, nil
	})
	tests := []struct {
		name  string
		opt   func(now func() time.Time) Options
		want  Reason
		iters int
	}{
		{"completes", func(func() time.Time) Options {
			return Options{Agent: builds, Gates: []gate.Gate{gate.HasSummary{}}, Limits: Limits{MaxIterations: 10}}
		}, Completed, 4},
		{"gate-failure streak", func(func() time.Time) Options {
			return Options{Agent: claims, Gates: []gate.Gate{gate.HasSummary{}}, Limits: Limits{MaxIterations: 10, GateFailures: 3}}
		}, GateFailures, 3},
		{"stall detection and its recovery", func(func() time.Time) Options {
			return Options{Agent: stuck, Limits: Limits{MaxIterations: 10}}
		}, Stalled, 6},
		{"time spent", func(now func() time.Time) Options {
			// Every iteration takes a minute on the engine's clock.
			return Options{Agent: builds, Now: now, Limits: Limits{MaxIterations: 10, MaxDuration: 150 * time.Second}}
		}, MaxDuration, 3},
	}
	for _, tc := range tests {
		for _, every := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s/yield after %d", tc.name, every), func(t *testing.T) {
				ws, st := newBenchWorkspace(t, 1)
				ctx := context.Background()
				var mu sync.Mutex
				clock := time.Now() // real: the iteration deadline is a real context deadline
				now := func() time.Time {
					mu.Lock()
					defer mu.Unlock()
					return clock
				}
				opt := tc.opt(now)
				if opt.Now != nil {
					inner := opt.Agent
					opt.Agent = agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
						mu.Lock()
						clock = clock.Add(time.Minute)
						mu.Unlock()
						return inner.Run(ctx, req, emit)
					})
				}
				opt.YieldAfter = every
				out, err := New(ws, st, opt).Run(ctx, "do the work")
				runs := 1
				for err == nil && out.Reason == Yielded {
					if out.Reason.ExitCode() != 13 {
						t.Fatalf("yielded with exit code %d", out.Reason.ExitCode())
					}
					if out.Iterations != runs*every {
						t.Fatalf("run %d yielded after iteration %d, want %d", runs, out.Iterations, runs*every)
					}
					task, terr := st.LatestTask(ctx)
					if terr != nil || task.Reason == string(Interrupted) || task.Reason != "" {
						t.Fatalf("a yield recorded the task as %q (%v)", task.Reason, terr)
					}
					runs++
					if runs > 20 {
						t.Fatal("the task never ended")
					}
					out, err = New(ws, st, opt).Resume(ctx, false)
				}
				if err != nil {
					t.Fatal(err)
				}
				if out.Reason != tc.want || out.Iterations != tc.iters {
					t.Fatalf("ended %s after %d iterations (%s), want %s after %d", out.Reason, out.Iterations, out.Detail, tc.want, tc.iters)
				}
				wantRuns := 1
				if every > 0 {
					wantRuns = (tc.iters + every - 1) / every
				}
				if runs != wantRuns {
					t.Errorf("%d runs, want %d", runs, wantRuns)
				}
				its, err := st.Iterations(ctx, out.TaskID)
				if err != nil {
					t.Fatal(err)
				}
				for i, it := range its {
					if it.Number != i+1 {
						t.Fatalf("iteration numbers %v have a gap at %d", its, i+1)
					}
				}
				if len(its) != tc.iters {
					t.Errorf("%d iterations in the store, want %d", len(its), tc.iters)
				}
			})
		}
	}
}

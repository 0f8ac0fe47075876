package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// The second task's parser sees the first task's summary (SPEC §8), and
// the history gets its first line, although the stale-state cleanup
// clears summary.md before the message is parsed.
func TestNextTaskSeesPreviousSummary(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	var prompts []string
	model := task.ModelFunc(func(ctx context.Context, system, user string) (string, error) {
		prompts = append(prompts, user)
		return "", context.Canceled // fall back to the template; the prompt is what counts
	})
	e := New(ws, st, Options{Agent: doneAgent, TaskParser: &task.Parser{Model: model}, Limits: Limits{MaxIterations: 3}})
	for _, msg := range []string{"add two drinks", "add a third drink"} {
		out, err := e.Run(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		if out.Reason != Completed {
			t.Fatalf("%q ended %s: %s", msg, out.Reason, out.Detail)
		}
	}
	if len(prompts) != 2 {
		t.Fatalf("the parser's model was asked %d times, want 2", len(prompts))
	}
	if !strings.Contains(prompts[0], "Previous task summary: none") {
		t.Errorf("first task's prompt should have no previous summary:\n%s", prompts[0])
	}
	if !strings.Contains(prompts[1], "Previous task summary:\nAdded two drinks") {
		t.Errorf("second task's prompt lacks the first task's summary:\n%s", prompts[1])
	}
	if h, _ := ws.Read(workspace.TaskHistory); !strings.Contains(h, "- Task 1: Added two drinks") {
		t.Errorf("task-history.md = %q", h)
	}
}

// A stall recovery survives a resume: the first stall of a task recovers,
// and the next one after `ralph resume` is the second, which ends the task
// as stalled (SPEC §10), rather than a first recovery all over again.
func TestStallRecoveryCountSurvivesResume(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	// The same call every iteration, changing nothing: a stall every
	// third iteration.
	stuck := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		emit(agent.Event{Kind: agent.KindToolCall, Tool: "read", Input: json.RawMessage(`{"path":"src/pkg0/file0.go"}`)})
		return agent.Result{ToolCalls: 1, Final: "still looking"}, nil
	})
	out, err := New(ws, st, Options{Agent: stuck, Limits: Limits{MaxIterations: 4}}).Run(context.Background(), "fix the bug")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != MaxIterations {
		t.Fatalf("first run ended %s: %s", out.Reason, out.Detail)
	}
	if fb, _ := ws.Read(workspace.Feedback); !strings.Contains(strings.ToLower(fb), "stall") {
		t.Fatalf("the first stall wrote no recovery guidance; feedback.md:\n%s", fb)
	}
	out, err = New(ws, st, Options{Agent: stuck, Limits: Limits{MaxIterations: 8}}).Resume(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Stalled || out.Iterations != 7 {
		t.Fatalf("resumed run ended %s after %d iterations, want stalled after 7: %s", out.Reason, out.Iterations, out.Detail)
	}
}

// The gate-failure streak survives an interruption: a task that failed
// its gates twice, was interrupted and resumed, ends at the third failure
// in a row (SPEC §4), not after three more.
func TestGateFailureStreakSurvivesResume(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Asks to finish every iteration without ever writing summary.md;
	// in the third it is interrupted.
	claims := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if req.Iteration == 3 {
			cancel()
			return agent.Result{}, ctx.Err()
		}
		return agent.Result{Final: "done <promise>COMPLETE</promise>"}, nil
	})
	opt := Options{Agent: claims, Gates: []gate.Gate{gate.HasSummary{}}, Limits: Limits{MaxIterations: 10, GateFailures: 3}}
	out, err := New(ws, st, opt).Run(ctx, "write the docs")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Interrupted {
		t.Fatalf("first run ended %s: %s", out.Reason, out.Detail)
	}
	out, err = New(ws, st, opt).Resume(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != GateFailures || out.Iterations != 4 {
		t.Fatalf("resumed run ended %s after %d iterations, want gate-failures after 4: %s", out.Reason, out.Iterations, out.Detail)
	}
}

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// ambiguousModel answers the task parser with needs-clarification.
var ambiguousModel = task.ModelFunc(func(ctx context.Context, system, user string) (string, error) {
	b, _ := json.Marshal(map[string]any{
		"type": "needs-clarification", "title": "More drinks",
		"requirements": []map[string]string{}, "preserve": []string{}, "affected_files": []string{},
		"question": "Should the 2 nighttime drinks be added to the 8 existing ones, or replace some of them?",
	})
	return string(b), nil
})

// doneAgent finishes at once with a summary.
var doneAgent = agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	emit(agent.Event{Kind: agent.KindToolCall, Tool: "write", Input: json.RawMessage(`{"path":".ralph/summary.md"}`)})
	if err := workspace.WriteFile(req.Dir+"/.ralph/summary.md", []byte("Added two drinks\n")); err != nil {
		return agent.Result{}, err
	}
	return agent.Result{ToolCalls: 1, Final: "done <promise>COMPLETE</promise>"}, nil
})

// A needs-clarification task asks the human its question before the loop
// starts; the answer joins task.md and the task runs.
func TestNeedsClarificationAsksHumanFirst(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	e := New(ws, st, Options{Agent: doneAgent, TaskParser: &task.Parser{Model: ambiguousModel}, Limits: Limits{MaxIterations: 3}})
	answered := make(chan error, 1)
	go func() {
		ctx := context.Background()
		for range 200 {
			reqs, err := st.PendingHumanRequests(ctx)
			if err == nil && len(reqs) == 1 {
				if ws.Status() != workspace.StatusWaiting {
					answered <- fmt.Errorf("status.txt = %q while the question waits", ws.Status())
					return
				}
				_, err := st.ResolveHuman(ctx, reqs[0].ID, store.HumanApproved, "add them to the existing 8")
				answered <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		answered <- fmt.Errorf("no clarification request appeared")
	}()
	out, err := e.Run(context.Background(), "more drinks for nighttime")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	md, _ := ws.Read(workspace.Task)
	for _, want := range []string{"Should the 2 nighttime drinks be added", "Answer: add them to the existing 8", "> more drinks for nighttime"} {
		if !strings.Contains(md, want) {
			t.Errorf("task.md lacks %q:\n%s", want, md)
		}
	}
}

// A rejected clarification ends the task before any iteration runs.
func TestNeedsClarificationRejected(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	e := New(ws, st, Options{Agent: doneAgent, TaskParser: &task.Parser{Model: ambiguousModel}})
	go func() {
		ctx := context.Background()
		for range 200 {
			if reqs, _ := st.PendingHumanRequests(ctx); len(reqs) == 1 {
				st.ResolveHuman(ctx, reqs[0].ID, store.HumanRejected, "")
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	out, err := e.Run(context.Background(), "more drinks")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != NeedsClarification || out.Iterations != 0 {
		t.Fatalf("run ended %s after %d iterations: %s", out.Reason, out.Iterations, out.Detail)
	}
	if out.Reason.ExitCode() != 11 {
		t.Errorf("exit code %d", out.Reason.ExitCode())
	}
}

package engine

import (
	"context"
	"strings"
	"testing"

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

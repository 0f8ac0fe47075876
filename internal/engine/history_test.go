package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// summaryAgent finishes at once, leaving summary as summary.md.
func summaryAgent(summary string) agent.Agent {
	return agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if err := workspace.WriteFile(filepath.Join(req.Dir, ".ralph", "summary.md"), []byte(summary)); err != nil {
			return agent.Result{}, err
		}
		return agent.Result{ToolCalls: 1, Final: "done <promise>COMPLETE</promise>"}, nil
	})
}

// The task history has one line per finished task: its summary's first
// line, shortened past 120 characters, and "(no summary)" for a blank
// summary.md.
func TestTaskHistoryLines(t *testing.T) {
	long := strings.Repeat("word ", 40) // 200 characters
	ws, st := newBenchWorkspace(t, 1)
	for _, summary := range []string{"  \n\n", "# " + long + "\nmore", "Last one\n"} {
		out, err := New(ws, st, Options{Agent: summaryAgent(summary), Limits: Limits{MaxIterations: 2}}).Run(context.Background(), "do a thing")
		if err != nil {
			t.Fatal(err)
		}
		if out.Reason != Completed {
			t.Fatalf("ended %s: %s", out.Reason, out.Detail)
		}
	}
	h, _ := ws.Read(workspace.TaskHistory)
	want := "- Task 1: (no summary)\n- Task 2: " + long[:117] + "...\n"
	if !strings.Contains(h, want) {
		t.Errorf("task-history.md = %q\nwant it to hold %q", h, want)
	}
}

// A task counter put back (as a rollback does) never makes a new task
// reuse the number of a task on record.
func TestTaskNumberPastTasksOnRecord(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	run := func() int {
		t.Helper()
		out, err := New(ws, st, Options{Agent: summaryAgent("Done\n"), Limits: Limits{MaxIterations: 2}}).Run(context.Background(), "do a thing")
		if err != nil {
			t.Fatal(err)
		}
		return out.Task
	}
	if n := run(); n != 1 {
		t.Fatalf("first task is %d", n)
	}
	if err := ws.SetInt(workspace.TaskCounter, 0); err != nil {
		t.Fatal(err)
	}
	if n := run(); n != 2 {
		t.Errorf("after the counter went back to 0 the next task is %d, want 2", n)
	}
}

// A ralph killed after the gates passed leaves a task that resume
// finishes without calling the agent again.
func TestResumeFinishesTaskWhoseGatesPassed(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	snaps, err := snapshot.Open(context.Background(), ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	counting := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		calls.Add(1)
		return summaryAgent("Done\n").Run(ctx, req, emit)
	})
	opt := Options{Agent: counting, Snapshots: snaps, Limits: Limits{MaxIterations: 3}}
	// The first run dies (its goroutine ends) right after task-1-post is
	// saved: the gates have passed, the task is not yet recorded as done.
	opt.Reporter = ReporterFunc(func(p Progress) {
		if p.Stage == StageNote && strings.HasPrefix(p.Message, "saved task-1-post") {
			runtime.Goexit()
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		New(ws, st, opt).Run(context.Background(), "do a thing")
	}()
	<-done
	if n := calls.Load(); n != 1 {
		t.Fatalf("the agent ran %d times before the kill, want 1", n)
	}
	opt.Reporter = nil
	out, err := New(ws, st, opt).Resume(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed || calls.Load() != 1 || !strings.Contains(out.Detail, "ralph resume finished the task") {
		t.Fatalf("resume ended %s after %d agent calls: %s", out.Reason, calls.Load(), out.Detail)
	}
}

// A task that ended waiting for a clarification that was refused is not
// resumed, even with --force: there is nothing to build yet.
func TestForcedResumeRefusesRejectedClarification(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
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
	opt := Options{Agent: doneAgent, TaskParser: &task.Parser{Model: ambiguousModel}}
	out, err := New(ws, st, opt).Run(context.Background(), "more drinks")
	if err != nil || out.Reason != NeedsClarification {
		t.Fatalf("run = %+v, %v", out, err)
	}
	if _, err := New(ws, st, opt).Resume(context.Background(), true); !errors.Is(err, ErrNothingToResume) {
		t.Errorf("forced resume: %v, want ErrNothingToResume", err)
	}
}

// What the stall detector counts as progress: the work and the plan and
// summary the agent writes, not the files the harness rewrites each
// iteration nor dependency caches.
func TestSkipForTreeHash(t *testing.T) {
	for rel, skip := range map[string]bool{
		"src/main.go":             false,
		".ralph":                  false,
		".ralph/plan.tsx":         false,
		".ralph/summary.md":       false,
		".ralph/feedback.md":      true,
		".ralph/iteration.txt":    true,
		"node_modules/x/index.js": true,
		"web/.cache/a":            true,
	} {
		if got := skipForTreeHash(rel); got != skip {
			t.Errorf("skipForTreeHash(%q) = %v, want %v", rel, got, skip)
		}
	}
}

// A project's own prompt templates in .ralph/prompts replace the
// embedded ones.
func TestProjectPromptTemplates(t *testing.T) {
	ws, st := newBenchWorkspace(t, 1)
	dir := filepath.Join(ws.StateDir(), "prompts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "user.md"), []byte("Project prompt for iteration {{.Iteration}}."), 0o644); err != nil {
		t.Fatal(err)
	}
	_, user, err := New(ws, st, Options{}).prompts(PromptData{Iteration: 7})
	if err != nil {
		t.Fatal(err)
	}
	if user != "Project prompt for iteration 7.\n" {
		t.Errorf("user prompt = %q", user)
	}
	// An edit counts from the next prompt (templates are kept parsed
	// only while their source is the same), and a template that no longer
	// parses says so.
	if err := os.WriteFile(filepath.Join(dir, "user.md"), []byte("Edited for iteration {{.Iteration}}."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, user, err = New(ws, st, Options{}).prompts(PromptData{Iteration: 8}); err != nil || user != "Edited for iteration 8.\n" {
		t.Errorf("user prompt after an edit = %q, %v", user, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "user.md"), []byte("Broken {{.Iteration"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = New(ws, st, Options{}).prompts(PromptData{Iteration: 9}); err == nil || !strings.Contains(err.Error(), ".ralph/prompts/user.md") {
		t.Errorf("a template that does not parse: %v", err)
	}
}

// A persona written with its own article keeps it.
func TestYouAreKeepsArticles(t *testing.T) {
	for in, want := range map[string]string{
		"The lead engineer":  "You are the lead engineer.",
		"My pair programmer": "You are my pair programmer.",
		"A tester":           "You are a tester.",
	} {
		if got := (PromptData{Persona: in}).YouAre(); got != want {
			t.Errorf("YouAre(%q) = %q, want %q", in, got, want)
		}
	}
}

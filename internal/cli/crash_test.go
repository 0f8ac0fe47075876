package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

// syncBuffer is a bytes.Buffer safe for a writing process and a reading test.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// buildRalph builds the ralph binary for tests that need a real process.
func buildRalph(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ralph")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/ralph")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build ralph: %v\n%s", err, out)
	}
	return bin
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// kill -9 of ralph in the middle of an iteration, then ralph resume: the
// task finishes, the database passes PRAGMA integrity_check, and nothing
// written before the kill is lost.
func TestKillNineThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real ralph process")
	}
	bin := buildRalph(t)
	dir := gitRepo(t)
	script := `{"iterations": [
		{"actions": [{"tool": "write", "path": "one.txt", "content": "written in iteration 1"}], "final": "one"},
		{"actions": [{"tool": "write", "path": "two.txt", "content": "written in iteration 2"}, {"tool": "sleep", "seconds": 60}], "final": "two"},
		{"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "Finished after a crash\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
	]}`
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "run", "--script", "agent.json", "survive a crash")
	run.Dir = dir
	var out syncBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until iteration 2 is sleeping, with two.txt written.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if time.Now().After(deadline) {
			run.Process.Kill()
			t.Fatalf("iteration 2 never started:\n%s", out.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "two.txt")); err == nil && strings.Contains(out.String(), "→ sleep") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = run.Wait()

	resume := exec.Command(bin, "resume")
	resume.Dir = dir
	got, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, got)
	}
	if !strings.Contains(string(got), "resuming task 1 at iteration 3") || !strings.Contains(string(got), "completed") {
		t.Errorf("resume output:\n%s", got)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s lost: %v", f, err)
		}
	}

	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	task, err := st.LatestTask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if task.Reason != "completed" {
		t.Errorf("task reason = %q, want completed", task.Reason)
	}
	its, err := st.Iterations(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := make([]string, len(its))
	for i, it := range its {
		outcomes[i] = it.Outcome
	}
	if strings.Join(outcomes, ",") != "continue,interrupted,completed" {
		t.Errorf("iteration outcomes = %v, want continue,interrupted,completed", outcomes)
	}
	evs, err := st.EventsAfter(ctx, task.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var sawTwo bool
	for _, e := range evs {
		if e.Iteration == 2 && e.Kind == "tool_call" && strings.Contains(e.Data, "two.txt") {
			sawTwo = true
		}
	}
	if !sawTwo {
		t.Error("the tool call made before the kill is missing from the event stream")
	}
}

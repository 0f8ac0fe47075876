package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
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

// Ctrl-C in the middle of an iteration: the agent's process group is
// killed, ralph finishes writing its state, exits 130 with a one-line
// reason, and ralph resume continues the task.
func TestInterruptThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signals a real ralph process")
	}
	bin := buildRalph(t)
	dir := gitRepo(t)
	script := `{"iterations": [
		{"actions": [{"tool": "write", "path": "one.txt", "content": "1"}, {"tool": "shell", "argv": ["sh", "-c", "echo $$ > agent-child.pid; sleep 60"]}], "final": "one"},
		{"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "Finished after Ctrl-C\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
	]}`
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "run", "--script", "agent.json", "survive ctrl-c")
	run.Dir = dir
	var out syncBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "agent-child.pid")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			run.Process.Kill()
			t.Fatalf("the agent's command never started:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := run.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := run.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "ralph: interrupted — interrupted; run `ralph resume` to continue") {
		t.Errorf("no one-line reason:\n%s", out.String())
	}
	// The agent's child died with it.
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid > 0 {
		gone := false
		for range 100 {
			if !proc.Alive(pid) {
				gone = true
				break
			}
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(st), ") Z ") {
				gone = true
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !gone {
			t.Errorf("the agent's child %d outlived Ctrl-C", pid)
		}
	}
	// No half-written state: no temporary files in .ralph/.
	entries, _ := os.ReadDir(filepath.Join(dir, ".ralph"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("half-written file left: %s", e.Name())
		}
	}

	status := exec.Command(bin, "status")
	status.Dir = dir
	got, _ := status.CombinedOutput()
	if !strings.Contains(string(got), "interrupted — continue with `ralph resume`") {
		t.Errorf("status after Ctrl-C:\n%s", got)
	}
	resume := exec.Command(bin, "resume")
	resume.Dir = dir
	got, err = resume.CombinedOutput()
	if err != nil || !strings.Contains(string(got), "completed") {
		t.Fatalf("resume: %v\n%s", err, got)
	}
}

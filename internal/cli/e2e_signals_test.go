package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

// ralph run | head: the reader goes away after the first line, and the
// run goes on to its end instead of dying of SIGPIPE.
func TestClosedPipeDoesNotEndTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ralph binary")
	}
	bin := buildRalph(t)
	dir := gitRepo(t)
	script := `{"iterations": [
  {"actions": [{"tool": "write", "path": "a.txt", "content": "a"}], "final": "working"},
  {"actions": [{"tool": "write", "path": "b.txt", "content": "b"}], "final": "working"},
  {"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "Done\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
]}`
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--script", "agent.json", "write three files")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	out.Close() // head has read what it wanted
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("ralph ended with %v (signal or exit), want exit 0 with the run finished", exit)
	} else if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	task, err := st.LatestTask(ctx)
	if err != nil || task.Reason != "completed" {
		t.Fatalf("task = %+v, %v; want completed", task, err)
	}
}

// A command that a signal cuts short while it starts up ends as an
// interruption (130, and says so), not as a usage error (2).
func TestSignalAtStartupIsAnInterruption(t *testing.T) {
	dir := gitRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came before the store was open
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-C", dir, "run", "--script", "agent.json", "anything"}, strings.NewReader(""), &stdout, &stderr)
	if code != 130 {
		t.Errorf("exit %d, want 130\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "ralph: interrupted (") || !strings.Contains(stderr.String(), "nothing was lost") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

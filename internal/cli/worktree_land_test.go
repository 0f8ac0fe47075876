package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// committedStateRepo is a repository whose first ralph run's .ralph/
// state files (task-counter.txt, phase.txt, task.md, …) are committed, as
// a user who runs `git add -A` after ralph does has them, with agent.json
// a one-iteration agent that writes a.txt.
func committedStateRepo(t *testing.T, bin string) string {
	t.Helper()
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "ralph test", "GIT_AUTHOR_EMAIL": "test@ralph.invalid",
		"GIT_COMMITTER_NAME": "ralph test", "GIT_COMMITTER_EMAIL": "test@ralph.invalid",
	} {
		t.Setenv(k, v)
	}
	dir := gitRepo(t)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent := func(file, content string) string {
		return `{"iterations": [{"actions": [{"tool": "write", "path": "` + file + `", "content": "` + content + `\n"}, {"tool": "write", "path": ".ralph/summary.md", "content": "done\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}]}`
	}
	write("first.json", agent("first.txt", "first"))
	write("agent.json", agent("a.txt", "from the task"))
	if out, code := ralphCmd(t, bin, dir, "run", "--script", "first.json", "the first task"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	gitOutput(t, dir, "add", "-A")
	gitOutput(t, dir, "commit", "-qm", "ralph's state committed")
	if tracked := gitOutput(t, dir, "ls-files", ".ralph"); !strings.Contains(tracked, ".ralph/task-counter.txt") {
		t.Fatalf("ralph's state is not committed:\n%s", tracked)
	}
	return dir
}

// In a repository whose .ralph/ state files are committed, ralph run
// --worktree lands its task: ralph's own bookkeeping (task-counter.txt
// and the rest) is never what blocks the landing as "your uncommitted
// changes".
func TestWorktreeTaskLandsWhenRalphStateIsCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real ralph process")
	}
	bin := buildRalph(t)
	dir := committedStateRepo(t, bin)
	branch := strings.TrimSpace(gitOutput(t, dir, "symbolic-ref", "--short", "HEAD"))
	cmd := exec.Command(bin, "run", "--worktree", "--script", "agent.json", "the second task")
	cmd.Dir = dir
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, cmd.Process.Pid)
	waitExit(t, cmd, &out, 90*time.Second, "waiting to land on its own bookkeeping")
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(out.String(), "landed on "+branch) {
		t.Fatalf("ralph run --worktree: exit %d\n%s", code, out.String())
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(got) != "from the task\n" {
		t.Errorf("a.txt = %q (%v), want the task's", got, err)
	}
	if strings.Contains(out.String(), "waiting to land") {
		t.Errorf("the landing waited:\n%s", out.String())
	}
}

// Ctrl-C while a worktree task waits to land on the user's overlapping
// change is an interruption (exit 130) that keeps the branch for ralph
// resume, never a usage error.
func TestCtrlCWhileWaitingToLandIsAnInterruption(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and signals a real ralph process")
	}
	bin := buildRalph(t)
	dir := committedStateRepo(t, bin)
	// The user's uncommitted a.txt is in the way of the task's.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOutput(t, dir, "add", "a.txt")
	gitOutput(t, dir, "commit", "-qm", "a.txt")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("the user's, edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--worktree", "--script", "agent.json", "the second task")
	cmd.Dir = dir
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, cmd.Process.Pid)
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(out.String(), "waiting to land"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ralph never waited to land:\n%s", out.String())
		}
	}
	if !strings.Contains(out.String(), "your uncommitted changes overlap it (a.txt)") {
		t.Errorf("the wait does not name the user's a.txt alone:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, &out, 30*time.Second, "")
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(out.String(), "interrupted") {
		t.Errorf("Ctrl-C while waiting to land: exit %d, want 130 (interrupted):\n%s", code, out.String())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "the user's, edited\n" {
		t.Errorf("the user's a.txt = %q, want it untouched", got)
	}
	if br := gitOutput(t, dir, "branch", "--list", "ralph/task/*"); strings.TrimSpace(br) == "" {
		t.Error("the task's branch was not kept for ralph resume")
	}
}

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/store"
)

// gitOutput runs git in dir and returns its output, failing the test on error.
func gitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A real `ralph run --worktree` is killed with SIGKILL at each point of
// its task's life, and `ralph resume` with no flags finishes the task in
// its worktree and lands it: the starting branch holds the task's commit
// once, the worktree and its branch are gone, the database is sound with
// the task completed once and its snapshots on record once each, and the
// user's uncommitted and untracked files in the main tree are untouched.
func TestWorktreeKillAnywhereThenResume(t *testing.T) {
	killWorktreeRunThenResume(t, "resuming task 1 in .ralph/worktrees/task-1 on ralph/task/1",
		pausepoint.TaskRecorded, pausepoint.TaskPreSnapshot, pausepoint.TaskCounter,
		pausepoint.TaskWritten, pausepoint.IterationFile+"@2", pausepoint.PlanValidation,
		pausepoint.AgentEvent+"@2", pausepoint.Gates, pausepoint.PostSnapshot)
}

// A `ralph run --worktree` killed before its task is recorded, even after
// ralph.db exists, is started by `ralph resume` in its worktree and lands,
// as a plain run killed at the same moment is started: it is never
// "nothing to resume".
func TestWorktreeKilledBeforeItsTaskIsRecordedResumes(t *testing.T) {
	killWorktreeRunThenResume(t, "ralph run --worktree was stopped before its task was recorded; starting it now",
		pausepoint.RequestWritten, pausepoint.StoreOpened)
}

// killWorktreeRunThenResume kills a ralph run --worktree at each of points
// and checks that ralph resume, saying resumed, finishes and lands it.
func killWorktreeRunThenResume(t *testing.T, resumed string, points ...string) {
	bin := buildRalph(t)
	// The task's commit needs an identity on any machine.
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "ralph test", "GIT_AUTHOR_EMAIL": "test@ralph.invalid",
		"GIT_COMMITTER_NAME": "ralph test", "GIT_COMMITTER_EMAIL": "test@ralph.invalid",
	} {
		t.Setenv(k, v)
	}
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			dir := crashRepo(t)
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("committed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitOutput(t, dir, "add", "-A")
			gitOutput(t, dir, "commit", "-qm", "init")
			branch := strings.TrimSpace(gitOutput(t, dir, "symbolic-ref", "--short", "HEAD"))
			edited, untracked := "committed\nmy uncommitted line\n", "mine, untracked\n"
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "scratch.txt"), []byte(untracked), 0o644); err != nil {
				t.Fatal(err)
			}

			runUntilPaused(t, bin, dir, point, "--worktree", "--script", "agent.json", crashTask1)
			if _, err := os.Stat(filepath.Join(dir, ".ralph", "worktrees", "task-1")); err != nil && strings.HasPrefix(resumed, "resuming") {
				t.Fatalf("the killed run left no worktree: %v", err)
			}
			out, code := ralphCmd(t, bin, dir, "resume")
			if code != 0 || !strings.Contains(out, resumed) ||
				!strings.Contains(out, "task 1 landed on "+branch) {
				t.Fatalf("resume: exit %d\n%s", code, out)
			}

			subject := "ralph task 1: " + crashTask1
			if log := gitOutput(t, dir, "log", "--format=%s", branch); strings.Count(log, subject) != 1 {
				t.Errorf("%s's log holds the task's commit %d times, want once:\n%s", branch, strings.Count(log, subject), log)
			}
			if n := strings.TrimSpace(gitOutput(t, dir, "rev-list", "--count", branch)); n != "2" {
				t.Errorf("%s has %s commits, want 2", branch, n)
			}
			if _, err := os.Stat(filepath.Join(dir, "src", "sections", "HeroSection.tsx")); err != nil {
				t.Errorf("the task's file did not land in the main tree: %v", err)
			}
			for name, want := range map[string]string{"notes.txt": edited, "scratch.txt": untracked} {
				if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
					t.Errorf("%s = %q (%v), want the user's %q", name, got, err, want)
				}
			}
			if wl := gitOutput(t, dir, "worktree", "list"); strings.Contains(wl, "worktrees") {
				t.Errorf("git worktree list keeps the task's worktree:\n%s", wl)
			}
			if br := gitOutput(t, dir, "branch", "--list", "ralph/*"); strings.TrimSpace(br) != "" {
				t.Errorf("the task's branch is kept: %s", br)
			}
			if _, err := os.Stat(filepath.Join(dir, ".ralph", "worktrees", "task-1")); !os.IsNotExist(err) {
				t.Errorf("the worktree's directory is still there: %v", err)
			}

			ctx := context.Background()
			st := openDB(t, dir)
			defer st.Close()
			if err := st.IntegrityCheck(ctx); err != nil {
				t.Fatal(err)
			}
			all, err := st.Tasks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 1 || all[0].Number != 1 || all[0].Status != store.TaskDone || all[0].Reason != "completed" {
				t.Fatalf("tasks on record: %+v, want task 1 done/completed", all)
			}
			for _, name := range []string{"task-1-pre", "task-1-post"} {
				if n := len(queryStrings(t, st.DB(), `SELECT name FROM snapshots WHERE name = ?`, name)); n != 1 {
					t.Errorf("snapshot %s is on record %d times, want once", name, n)
				}
			}
			if _, ok, _ := st.State(ctx, keyWorktreeTask); ok {
				t.Error("the landed task is still recorded as a worktree task")
			}
			if out, code := ralphCmd(t, bin, dir, "resume"); code != 1 || !strings.Contains(out, "nothing to resume") {
				t.Errorf("a second resume: exit %d, want 1 with nothing to resume:\n%s", code, out)
			}
			if t.Failed() {
				t.Logf("resume output:\n%s", out)
			}
		})
	}
}

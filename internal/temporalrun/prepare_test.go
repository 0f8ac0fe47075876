package temporalrun

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// A task's next attempt on the same worker gets a worktree on the task's
// branch at the base even though the attempt before it, whose worker
// lost it, still has its worktree on that branch.
func TestPrepareFreesTheBranchOfAnEarlierAttempt(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "remote.git")
	work := filepath.Join(root, "work")
	gitT(t, root, "init", "-q", "--bare", "-b", "main", remote)
	gitT(t, root, "init", "-q", "-b", "main", work)
	if err := os.WriteFile(filepath.Join(work, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, work, "add", "-A")
	gitT(t, work, "commit", "-qm", "init")
	base := gitT(t, work, "rev-parse", "HEAD")
	gitT(t, work, "push", "-q", "file://"+remote, "HEAD:refs/ralph/base/"+base)

	r := &Runner{Cache: filepath.Join(root, "cache"), Identity: "w1", Log: slog.New(slog.DiscardHandler)}
	job := Job{Kind: KindTask, Name: "t", Remote: "file://" + remote, BaseRef: "refs/ralph/base/" + base, Base: base, Branch: "ralph/task/t"}
	first, err := r.prepare(t.Context(), job, "wf", 1)
	if err != nil {
		t.Fatal(err)
	}
	// The first attempt committed, then its worker lost it.
	if err := os.WriteFile(filepath.Join(first, "work.txt"), []byte("half done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, first, "add", "-A")
	gitT(t, first, "commit", "-qm", "attempt 1")

	second, err := r.prepare(t.Context(), job, "wf", 2)
	if err != nil {
		t.Fatalf("the second attempt cannot start: %v", err)
	}
	if head := gitT(t, second, "rev-parse", "HEAD"); head != base {
		t.Errorf("the second attempt starts at %s, want the base %s", head, base)
	}
	if b := gitT(t, second, "symbolic-ref", "--short", "HEAD"); b != job.Branch {
		t.Errorf("the second attempt is on %s, want %s", b, job.Branch)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the first attempt's worktree is still there (%v)", err)
	}
}

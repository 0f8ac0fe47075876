//go:build unix

package snapshot

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// gitHoldingIndexLock starts a real git that takes the private index's lock
// and waits on its standard input, as a save does while ralph feeds it
// paths. holders, when not nil, is handed to it as ralph hands its git the
// holders' file. It returns once index.lock exists.
func gitHoldingIndexLock(t *testing.T, dir string, holders *os.File) (*exec.Cmd, *os.File) {
	t.Helper()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "update-index", "--add", "-z", "--stdin")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(dir, ".git", "ralph", "index"))
	cmd.Stdin = stdinR
	if holders != nil {
		cmd.ExtraFiles = []*os.File{holders}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	lock := filepath.Join(dir, ".git", "ralph", "index.lock")
	for i := 0; ; i++ {
		if _, err := os.Stat(lock); err == nil {
			break
		}
		if i > 1000 {
			t.Fatal("git never took the private index's lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, stdinW
}

// A git killed with SIGKILL (ralph's whole process group killed during a
// save or a rollback) leaves .git/ralph/index.lock behind. Nothing that
// could own it runs any more, so the next save removes it at once instead
// of failing with "File exists" for two minutes.
func TestIndexLockOfKilledGitRemovedAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	r := open(t, dir)
	if _, err := r.Save(ctx, TaskPre(1), ""); err != nil {
		t.Fatal(err)
	}
	cmd, stdin := gitHoldingIndexLock(t, dir, nil)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	stdin.Close()

	write(t, dir, "a.txt", "b\n")
	if _, err := r.Save(ctx, TaskPost(1), ""); err != nil {
		t.Fatalf("Save after a git was killed holding the private index's lock: %v", err)
	}
	if _, err := r.Rollback(ctx, TaskPre(1)); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
}

// A lock whose git still runs (ralph died, its git did not) is never
// removed, however the save waits for it: removing it would let two gits
// write the index at once.
func TestIndexLockOfRunningGitKept(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	r := open(t, dir)
	if _, err := r.Save(ctx, TaskPre(1), ""); err != nil {
		t.Fatal(err)
	}
	h := r.holders.hold()
	if h == nil {
		t.Fatal("no shared lock on the holders' file")
	}
	cmd, stdin := gitHoldingIndexLock(t, dir, h)
	h.Close() // only the git holds it now, as after its ralph was killed
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()

	write(t, dir, "a.txt", "b\n")
	_, err := r.Save(ctx, TaskPost(1), "")
	var ge *git.Error
	if !errors.As(err, &ge) || !ge.LockBusy() {
		t.Fatalf("Save while a git holds the private index's lock = %v, want it refused as busy", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "ralph", "index.lock")); err != nil {
		t.Fatalf("the running git's lock was removed: %v", err)
	}
	if !strings.Contains(err.Error(), "index.lock") {
		t.Errorf("error %q does not name the lock", err)
	}
}

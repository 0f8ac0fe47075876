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
	dir, r, _, _ := savedRepo(t, "a.txt", "a\n")
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
	dir, r, _, _ := savedRepo(t, "a.txt", "a\n")
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

	// A file gone: only git add -A stages that, which needs the lock.
	if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
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

// A git killed while it wrote a snapshot's ref leaves the ref's lock file
// behind (a rollback killed during its save; its continuation, within the
// same second, saves under the same rollback name). No git of this ralph's
// runs and the lock is old: the save removes it and goes on.
func TestRefLockOfKilledGitRemoved(t *testing.T) {
	ctx := context.Background()
	dir, r, _, _ := savedRepo(t, "a.txt", "a\n")
	lock := filepath.Join(dir, ".git", filepath.FromSlash(RefPrefix+TaskPost(1))+".lock")
	if err := os.WriteFile(lock, []byte(strings.Repeat("1", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * refLockAge)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "b\n")
	if _, err := r.Save(ctx, TaskPost(1), ""); err != nil {
		t.Fatalf("Save with its ref's lock left by a killed git: %v", err)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock is still there: %v", err)
	}
}

// A ref's lock is only removed when it is old and no git of this ralph's
// runs, and only for ralph's own refs.
func TestRefLockKeptWhileItMayBeHeld(t *testing.T) {
	dir := newRepo(t)
	r := open(t, dir)
	h := r.holders
	lock := filepath.Join(dir, ".git", filepath.FromSlash(RefPrefix+"manual-1")) + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	msg := func(path string) string { return "fatal: Unable to create '" + path + "': File exists.\n" }
	if got, ok := h.refLock(msg(lock)); !ok || got != lock {
		t.Fatalf("refLock = %q, %v; want %q", got, ok, lock)
	}
	for _, other := range []string{filepath.Join(dir, ".git", "refs", "heads", "main.lock"), filepath.Join(dir, ".git", "index.lock"), filepath.Join(dir, ".git", "refs", "ralph", "..", "heads", "main.lock")} {
		if _, ok := h.refLock(msg(other)); ok {
			t.Errorf("refLock takes %s for one of ralph's refs", other)
		}
	}
	if h.removeRefLock(lock) {
		t.Fatal("a lock made just now was removed")
	}
	old := time.Now().Add(-2 * refLockAge)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	held := h.hold()
	if held == nil {
		t.Fatal("no holders' lock")
	}
	if h.removeRefLock(lock) {
		t.Fatal("a lock was removed while a git of this ralph's may hold it")
	}
	held.Close()
	if !h.removeRefLock(lock) {
		t.Fatal("an old lock no git holds was kept")
	}
}

// A git killed with its ralph as it seeded the private index left the
// seed's lock: the next save removes it, no git of a ralph holding the
// holders' lock, and seeds. One a running git of ralph's holds is kept.
func TestSeedLockOfKilledGitRemoved(t *testing.T) {
	ctx := context.Background()
	dir, r, _, _ := savedRepo(t, "a.txt", "a\n")
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "start") // the seed starts from a commit
	seedLock := filepath.Join(dir, ".git", "ralph", "index.seed.lock")
	// The private index gone (the seed makes it again), the lock there.
	if err := os.Remove(filepath.Join(dir, ".git", "ralph", "index")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedLock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := r.holders.hold() // a git of a ralph still running
	if _, err := r.Save(ctx, TaskPost(1), ""); err == nil {
		t.Fatal("Save seeded over a lock a running git may hold")
	}
	if _, err := os.Stat(seedLock); err != nil {
		t.Error("the seed's lock was removed while a git of ralph's held the holders' lock")
	}
	h.Close()
	write(t, dir, "a.txt", "b\n")
	if _, err := r.Save(ctx, TaskPost(1), ""); err != nil {
		t.Fatalf("Save after a git was killed holding the seed's lock: %v", err)
	}
	if _, err := os.Stat(seedLock); err == nil {
		t.Error("the seed's lock is still there")
	}
}

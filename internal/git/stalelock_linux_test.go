package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lock a killed git left stops every later git that needs it; one
// that no git running in the repository holds is removed and the call
// run again, waiting while the lock is younger than git holds one. One a
// git that runs there may hold (a user's git commit waiting for its
// editor), is kept.
func TestRunUnlockingRemovesALockAKilledGitLeft(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		age     time.Duration
		running bool // a git runs in the repository
		removed bool
	}{
		{"an old lock, no git running", time.Hour, false, true},
		{"a young lock, waited for", 500 * time.Millisecond, false, true},
		{"a git runs in the repository", time.Hour, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.running {
				userGit(t, repo)
			}
			lock := filepath.Join(repo, ".git", "index.lock")
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			at := began.Add(-tc.age)
			os.Chtimes(lock, at, at)
			_, err := RunUnlocking(ctx, repo, time.Time{}, "add", "a.txt")
			if !CanTellRunningGits() {
				tc.removed = false // a container's view: no lock is removed
			}
			if tc.removed != (err == nil) {
				t.Fatalf("git add = %v, want the lock removed %v", err, tc.removed)
			}
			if tc.removed && tc.age < lockHoldAge && time.Since(began) < lockHoldAge-tc.age-50*time.Millisecond {
				t.Errorf("removed a lock %s old after %s", tc.age, time.Since(began))
			}
			if _, serr := os.Stat(lock); tc.removed == (serr == nil) {
				t.Errorf("lock there afterwards: %v, want %v", serr == nil, !tc.removed)
			}
			if !tc.removed && LockedPath(err) != lock {
				t.Errorf("LockedPath(%v) = %q, want %q", err, LockedPath(err), lock)
			}
		})
	}
}

// userGit starts a git that runs in repo until the test ends, as a
// user's does: not ralph's child (a shell starts it), its working
// directory the repository; and waits until /proc shows it, where it can.
func userGit(t *testing.T, repo string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "git cat-file --batch; true")
	cmd.Dir = repo
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	if CanTellRunningGits() {
		waitForGit(t, repo)
	}
}

// waitForGit waits until /proc shows a git working in dir.
func waitForGit(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if running, _ := gitRunsIn([]string{dir}); running {
			return
		}
	}
	t.Fatal("no git seen running in the repository")
}

func TestRepoDirs(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "repo", ".git", "worktrees", "task-1")
	relative := filepath.Join(dir, "repo", ".git", "worktrees", "task-2")
	for _, d := range []string{record, relative, filepath.Join(dir, "elsewhere", "task-1"), filepath.Join(dir, "elsewhere", "task-2"), filepath.Join(dir, "not-git")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(record, "gitdir"), []byte(filepath.Join(dir, "elsewhere", "task-1", ".git")+"\n"), 0o644)
	// git 2.48's worktree.useRelativePaths: relative to the record.
	os.WriteFile(filepath.Join(relative, "gitdir"), []byte("../../../../elsewhere/task-2/.git\n"), 0o644)
	// The repository through a symbolic link, as git names the lock when
	// the directory ralph started in is one.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "repo"), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lock string
		want []string
	}{
		{filepath.Join(dir, "repo", ".git", "index.lock"), []string{filepath.Join(dir, "repo")}},
		{filepath.Join(link, ".git", "index.lock"), []string{filepath.Join(dir, "repo")}},
		{filepath.Join(dir, "repo", ".git", "refs", "heads", "main.lock"), nil}, // no such directory: not told
		{filepath.Join(record, "index.lock"), []string{filepath.Join(dir, "repo"), filepath.Join(dir, "elsewhere", "task-1")}},
		{filepath.Join(relative, "index.lock"), []string{filepath.Join(dir, "repo"), filepath.Join(dir, "elsewhere", "task-2")}},
		{filepath.Join(dir, "not-git", "index.lock"), nil},
	} {
		got, ok := repoDirs(tc.lock)
		if ok != (tc.want != nil) || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("repoDirs(%s) = %v %v, want %v", tc.lock, got, ok, tc.want)
		}
	}
}

// A lock made before the moment the caller's own git started is not
// that git's: it is kept.
func TestRemoveStaleLockFileKeepsALockOlderThanSince(t *testing.T) {
	repo := newRepo(t)
	lock := filepath.Join(repo, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	at := time.Now().Add(-time.Hour)
	os.Chtimes(lock, at, at)
	if RemoveStaleLockFile(context.Background(), lock, time.Now().Add(-time.Minute)) {
		t.Error("removed a lock an hour old, given a git that started a minute ago")
	}
	if removed := RemoveStaleLockFile(context.Background(), lock, at); removed != CanTellRunningGits() {
		t.Errorf("a lock made as the git started: removed %v, want %v", removed, CanTellRunningGits())
	}
}

// A lock named through another path than the one a git works in (a
// symbolic link, which git keeps in its message when the directory it
// started in is one) is the same repository's: it is kept while that git
// runs.
func TestRemoveStaleLockFileSeesThroughALinkedPath(t *testing.T) {
	if !CanTellRunningGits() {
		t.Log("this machine hides processes from ralph: nothing is removed, as asserted below")
	}
	repo := newRepo(t)
	userGit(t, repo)
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(repo, alias); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(alias, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	at := time.Now().Add(-time.Hour)
	os.Chtimes(lock, at, at)
	if RemoveStaleLockFile(context.Background(), lock, time.Time{}) {
		t.Error("removed a lock named through another path while a git ran in the repository")
	}
}

package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
				// Not ralph's: started by another process (a shell), its
				// working directory the repository's, as a user's is.
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
				waitForGit(t, repo)
			}
			lock := filepath.Join(repo, ".git", "index.lock")
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-tc.age)
			os.Chtimes(lock, at, at)
			began := time.Now()
			_, err := RunUnlocking(ctx, repo, "add", "a.txt")
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
	dir := t.TempDir()
	record := filepath.Join(dir, "repo", ".git", "worktrees", "task-1")
	os.MkdirAll(record, 0o755)
	os.WriteFile(filepath.Join(record, "gitdir"), []byte(filepath.Join(dir, "elsewhere", "task-1", ".git")+"\n"), 0o644)
	for _, tc := range []struct {
		lock string
		want []string
	}{
		{filepath.Join(dir, "repo", ".git", "index.lock"), []string{filepath.Join(dir, "repo")}},
		{filepath.Join(dir, "repo", ".git", "refs", "heads", "main.lock"), []string{filepath.Join(dir, "repo")}},
		{filepath.Join(record, "index.lock"), []string{filepath.Join(dir, "repo"), filepath.Join(dir, "elsewhere", "task-1")}},
		{filepath.Join(dir, "not-git", "index.lock"), nil},
	} {
		got := repoDirs(tc.lock)
		if len(got) != len(tc.want) || (len(got) > 0 && (got[0] != tc.want[0] || got[len(got)-1] != tc.want[len(tc.want)-1])) {
			t.Errorf("repoDirs(%s) = %v, want %v", tc.lock, got, tc.want)
		}
	}
}

package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A git killed with the ralph that ran it (a SIGKILL of ralph's process
// group ends its gits too; a ralph killed alone sends them SIGTERM, and
// git then removes its locks) leaves its lock files, and every later git
// that needs one stops: "remove the file manually to continue". Git's
// own advice is to remove it once no git process runs in the repository;
// RemoveStaleLock does that, where the system lets ralph see every
// process (Linux, in the first process namespace's view), for a lock
// its caller knows a git of its own may have left.

// lockHoldAge is how long a lock must have stood before it can count as
// left by a git that died: git holds a lock for the moment of one write.
const lockHoldAge = time.Second

// lockQuietWait is how long RemoveStaleLockFile waits for a moment when
// no git runs in the repository.
const lockQuietWait = 3 * time.Second

// LockedPath returns the lock file a failed git call could not create
// because it exists, "" for any other error.
func LockedPath(err error) string {
	var ge *Error
	if !errors.As(err, &ge) {
		return ""
	}
	_, rest, ok := strings.Cut(ge.Stderr, "Unable to create '")
	if !ok {
		return ""
	}
	lock, _, ok := strings.Cut(rest, "': File exists")
	if !ok || !strings.HasSuffix(lock, ".lock") || !filepath.IsAbs(lock) {
		return ""
	}
	return filepath.Clean(lock)
}

// RemoveStaleLock removes the lock file that err (a failed git call)
// says exists, as RemoveStaleLockFile does, and reports whether it did,
// so that the caller runs the call again.
func RemoveStaleLock(ctx context.Context, err error, since time.Time) bool {
	lock := LockedPath(err)
	return lock != "" && RemoveStaleLockFile(ctx, lock, since)
}

// RemoveStaleLockFile removes lock, a git repository's lock file (under
// a .git directory, or a worktree's record there), when it was made at
// since or after (a moment before the caller's own git that may have
// left it started; any time when zero), it has stood at least
// lockHoldAge (a younger one is waited for), and no git process runs in
// that repository: a git that runs there, a user's `git commit` waiting
// for its editor included, keeps its lock. Where ralph cannot see every
// process (not Linux, another process namespace) it removes nothing. It
// reports whether the lock is gone.
func RemoveStaleLockFile(ctx context.Context, lock string, since time.Time) bool {
	dirs, ok := repoDirs(lock)
	if !ok {
		return false
	}
	first, err := os.Lstat(lock)
	if err != nil {
		return errors.Is(err, os.ErrNotExist) // gone already: run it again
	}
	if !first.Mode().IsRegular() || (!since.IsZero() && first.ModTime().Before(since.Add(-time.Second))) {
		return false
	}
	// Stood long enough by its time, or watched that long unchanged (a
	// time in the future, from a clock stepped back, cannot make it wait
	// for ever).
	watched := time.Now()
	for time.Since(first.ModTime()) < lockHoldAge && time.Since(watched) < lockHoldAge {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return false
		}
	}
	// A git that runs for a moment (an editor's git status) passes; one
	// that holds the lock goes on running.
	for polled := time.Now(); ; {
		running, known := gitRunsIn(dirs)
		if !known {
			return false
		}
		if !running {
			break
		}
		if time.Since(polled) >= lockQuietWait {
			return false
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return false
		}
	}
	// The same file still: not one a git made after the one it was went.
	now, err := os.Lstat(lock)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	if !os.SameFile(first, now) || !now.ModTime().Equal(first.ModTime()) || now.Size() != first.Size() {
		return false
	}
	return os.Remove(lock) == nil
}

// CanTellRunningGits reports whether RemoveStaleLockFile can tell, here,
// that no git runs in a repository: only then does it remove a lock.
func CanTellRunningGits() bool { return seesEveryProcess() }

// RunUnlocking is Run for a call that a lock a git killed with an
// earlier ralph left must not stop: when git stops on a lock that
// RemoveStaleLock removes (made at since or after), the call runs once
// more.
func RunUnlocking(ctx context.Context, dir string, since time.Time, args ...string) (string, error) {
	out, err := Run(ctx, dir, args...)
	if err != nil && RemoveStaleLock(ctx, err, since) {
		out, err = Run(ctx, dir, args...)
	}
	return out, err
}

// repoDirs returns the directories, with symbolic links resolved, a git
// that holds lock would work in: the working tree above the .git
// directory the lock is in (with that directory), and, for a lock in a
// linked worktree's record, that worktree. ok is false when the lock is
// not in a .git directory or a worktree cannot be told.
func repoDirs(lock string) ([]string, bool) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(lock))
	if err != nil {
		return nil, false
	}
	sep := string(filepath.Separator)
	i := strings.LastIndex(dir+sep, sep+".git"+sep)
	if i < 0 {
		return nil, false
	}
	top := dir[:i]
	if top == "" {
		top = sep
	}
	dirs := []string{top}
	// .git/worktrees/<name>/…: the worktree the record is for.
	rest := strings.Trim(strings.TrimPrefix(dir[i:], sep+".git"), sep)
	if parts := strings.Split(rest, sep); len(parts) >= 2 && parts[0] == "worktrees" {
		record := filepath.Join(top, ".git", "worktrees", parts[1])
		b, err := os.ReadFile(filepath.Join(record, "gitdir"))
		if err != nil {
			return nil, false
		}
		gitFile := strings.TrimSpace(string(b))
		if !filepath.IsAbs(gitFile) {
			gitFile = filepath.Join(record, gitFile)
		}
		wt, err := filepath.EvalSymlinks(filepath.Dir(gitFile))
		if err != nil {
			return nil, false
		}
		dirs = append(dirs, wt)
	}
	return dirs, true
}

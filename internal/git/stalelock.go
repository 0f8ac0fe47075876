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
// RemoveStaleLock does that for the lock a failed call names.

// lockHoldAge is how old a lock must be before it can count as left by a
// git that died: git holds a lock for the moment of one write, and a
// lock younger than this is waited for.
const lockHoldAge = time.Second

// unprovenLockAge is how old a lock must be where no process list says
// whether a git runs in the repository (systems without /proc).
const unprovenLockAge = 2 * time.Minute

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
// says exists, when it is a git repository's (under a .git directory,
// or a worktree's record there) and no git process runs in that
// repository, after waiting until the lock is older than git holds one;
// it reports whether it did, so that the caller runs the call again. A
// git that runs there, a user's `git commit` waiting for its editor
// included, keeps its lock. Where the system lists no processes, only a
// lock older than unprovenLockAge counts as stale.
func RemoveStaleLock(ctx context.Context, err error) bool {
	lock := LockedPath(err)
	if lock == "" {
		return false
	}
	dirs := repoDirs(lock)
	if dirs == nil {
		return false
	}
	for {
		fi, err := os.Lstat(lock)
		if err != nil {
			return errors.Is(err, os.ErrNotExist) // gone already: run it again
		}
		if !fi.Mode().IsRegular() {
			return false
		}
		age := time.Since(fi.ModTime())
		if age < lockHoldAge {
			select {
			case <-time.After(lockHoldAge - age):
				continue
			case <-ctx.Done():
				return false
			}
		}
		running, known := gitRunsIn(dirs)
		if running || (!known && age < unprovenLockAge) {
			return false
		}
		return os.Remove(lock) == nil
	}
}

// repoDirs returns the directories a git that holds lock would work in:
// the working tree above the .git directory the lock is in (with that
// directory), and, for a lock in a linked worktree's record, that
// worktree; nil when the lock is not in a .git directory.
func repoDirs(lock string) []string {
	dir := filepath.Dir(lock)
	i := strings.LastIndex(dir+string(filepath.Separator), string(filepath.Separator)+".git"+string(filepath.Separator))
	if i < 0 {
		return nil
	}
	top := dir[:i]
	if top == "" {
		top = string(filepath.Separator)
	}
	dirs := []string{top}
	// .git/worktrees/<name>/…: the worktree the record is for.
	rest := strings.TrimPrefix(dir[i:], string(filepath.Separator)+".git")
	if parts := strings.Split(strings.Trim(rest, string(filepath.Separator)), string(filepath.Separator)); len(parts) >= 2 && parts[0] == "worktrees" {
		record := filepath.Join(top, ".git", "worktrees", parts[1])
		if b, err := os.ReadFile(filepath.Join(record, "gitdir")); err == nil {
			if wt := filepath.Dir(strings.TrimSpace(string(b))); filepath.IsAbs(wt) {
				dirs = append(dirs, wt)
			}
		}
	}
	return dirs
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// RunUnlocking is Run for a call that a lock a killed git left must not
// stop: when git stops on one that RemoveStaleLock removes, the call runs
// once more.
func RunUnlocking(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := Run(ctx, dir, args...)
	if err != nil && RemoveStaleLock(ctx, err) {
		out, err = Run(ctx, dir, args...)
	}
	return out, err
}

package snapshot

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// indexHolders says who may be writing the private index, so that the
// index's lock file, which git leaves behind when it is killed with
// SIGKILL, is removed at once when its owner is provably gone rather than
// after staleLockAge.
//
// Every git call on the private index holds a shared lock (flock) on a file
// beside the index, index.holders, and passes the open file to git, so the
// lock lasts as long as either ralph or the git it started runs: the kernel
// keeps the record of the owners, and drops it when the last of them dies,
// however it dies. A ralph that finds index.lock in its way takes the lock
// exclusively without waiting; when it gets it, no process that could have
// made index.lock runs any more, and the lock file is removed. Where the
// system has no such locks (holders_other.go), only staleLockAge applies.
type indexHolders struct {
	path   string // index.holders
	lock   string // the private index's lock file, index.lock
	refs   string // the directory of ralph's refs, refs/ralph/, ending in a separator
	logger *slog.Logger
}

func newIndexHolders(index, common string, logger *slog.Logger) *indexHolders {
	return &indexHolders{path: filepath.Join(filepath.Dir(index), "index.holders"), lock: index + ".lock",
		refs: filepath.Join(common, "refs", "ralph") + string(filepath.Separator), logger: logger}
}

// refLockAge is how old the lock on one of ralph's refs must be, when no
// git of this repository's ralph runs, before it counts as left by a git
// that died: a git writes a ref in milliseconds, and a ralph in another
// worktree of the repository holds another holders' file.
const refLockAge = time.Second

// staleLockAge is how old the private index's lock file must be before it
// counts as left behind by a git that died, when the holders' lock cannot
// tell; saves take seconds at most.
const staleLockAge = 2 * time.Minute

// hold opens the holders' file and takes a shared lock on it for one git
// call; the caller passes the file to git and closes it when git has
// exited. It returns nil (and no lock) where the system has none or the
// file cannot be made, and the call goes on without it.
func (h *indexHolders) hold() *os.File {
	if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	if !lockShared(f) {
		f.Close()
		return nil
	}
	return f
}

// removeStale removes the private index's lock file when git says it is
// held and its owner is provably gone (no process holds the holders'
// lock) or the file is older than staleLockAge, and reports whether it
// did. Locks on the user's files are never removed.
func (h *indexHolders) removeStale(ge *git.Error) bool {
	if lock, ok := h.refLock(ge.Stderr); ok {
		return h.removeRefLock(lock)
	}
	if !strings.Contains(ge.Stderr, h.lock) {
		return false
	}
	fi, statErr := os.Stat(h.lock)
	if statErr != nil {
		return false
	}
	f, err := os.OpenFile(h.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		defer f.Close()
		if lockExclusiveNow(f) {
			// Nothing that could have made the lock file runs: a git killed
			// with its ralph left it. Holding the lock, no new git can make
			// one before it is gone.
			h.logger.Warn("removing the lock on the private snapshot index left by a git that died", "lock", h.lock)
			return os.Remove(h.lock) == nil
		}
	}
	if time.Since(fi.ModTime()) < staleLockAge {
		return false
	}
	h.logger.Warn("removing a stale lock on the private snapshot index", "lock", h.lock, "age", time.Since(fi.ModTime()).Round(time.Second))
	return os.Remove(h.lock) == nil
}

// refLock returns the lock file git's message stderr says is in its way
// when it is the lock of one of ralph's refs (refs/ralph/…).
func (h *indexHolders) refLock(stderr string) (string, bool) {
	_, rest, ok := strings.Cut(stderr, "Unable to create '")
	if !ok {
		return "", false
	}
	lock, _, ok := strings.Cut(rest, "': File exists")
	if !ok || !strings.HasPrefix(lock, h.refs) || !strings.HasSuffix(lock, ".lock") || strings.Contains(lock, "..") {
		return "", false
	}
	return lock, true
}

// removeRefLock removes lock, the lock of one of ralph's refs that a git
// killed while it wrote the ref (a snapshot's, the tip) left behind, when
// no git of this ralph's runs and the lock is older than refLockAge, and
// reports whether it did. A killed rollback's continuation, within the
// same second, saves under the same rollback name and would otherwise
// find its ref locked for good.
func (h *indexHolders) removeRefLock(lock string) bool {
	fi, err := os.Stat(lock)
	if err != nil || time.Since(fi.ModTime()) < refLockAge {
		return false
	}
	f, err := os.OpenFile(h.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	if !lockExclusiveNow(f) {
		return false
	}
	h.logger.Warn("removing the lock on a ralph ref left by a git that died", "lock", lock)
	return os.Remove(lock) == nil
}

// removeSeedLock removes lock, the lock on the copy of the private index
// seed makes (ralph's alone, in this worktree's git directory), when no
// git of this worktree's ralphs runs (the holders' lock): a git killed
// with its ralph as it seeded left it, and every later seed would stop
// on it.
func (h *indexHolders) removeSeedLock(lock string) {
	if _, err := os.Lstat(lock); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if lockExclusiveNow(f) {
		h.logger.Warn("removing the lock on the private index's seed left by a git that died", "lock", lock)
		_ = os.Remove(lock)
	}
}

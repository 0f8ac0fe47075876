package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/filelock"
	"github.com/ralph-harness/ralph/internal/git"
)

// locks holds one lock per repository, by its common git directory.
var locks sync.Map // string → *repoLock

// repoLock is a repository's worktree lock: sem serialises this
// process's callers (and can be given up waiting for), the file lock
// other processes.
type repoLock struct {
	sem    chan struct{}
	common string // the repository's common git directory
	path   string
	f      *os.File
}

// lock takes the worktree lock of the repository that repo belongs to.
func lock(ctx context.Context, repo string) (*repoLock, error) {
	common, err := git.Line(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	v, _ := locks.LoadOrStore(common, &repoLock{sem: make(chan struct{}, 1), common: common, path: filepath.Join(common, "ralph", "worktrees.lock")})
	l := v.(*repoLock)
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f, err := flock(ctx, l.path)
	if err != nil {
		<-l.sem
		return nil, fmt.Errorf("lock the worktrees: %w", err)
	}
	l.f = f
	return l, nil
}

func (l *repoLock) unlock() {
	_ = filelock.Unlock(l.f)
	_ = l.f.Close()
	l.f = nil
	<-l.sem
}

// flock opens path and takes an exclusive lock on it, waiting for
// another process to give it up until ctx ends. The operating system
// drops the lock of a process that dies.
func flock(ctx context.Context, path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	delay := time.Millisecond
	for {
		err := filelock.TryLock(f)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, filelock.ErrLocked) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

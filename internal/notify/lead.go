package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/filelock"
)

// ErrLeaderElsewhere means another process holds the notify lock: it
// sends the workspace's notifications and listens for their answers.
var ErrLeaderElsewhere = errors.New("another ralph process (a run or ralph serve) sends and listens for this workspace")

// TryLead takes the notify lock at path without waiting; release gives
// it up (the operating system does when the process dies). It fails with
// ErrLeaderElsewhere when another process holds it.
func TryLead(path string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, ErrLeaderElsewhere
		}
		return nil, err
	}
	return func() {
		_ = filelock.Unlock(f)
		f.Close()
	}, nil
}

// Lead runs start only while this process holds the notify lock at
// path, so that exactly one process per workspace sends and polls the
// bots: it tries at once and then every retry, and when it gets the lock
// it keeps it until stop. stop ends whatever start began.
func Lead(ctx context.Context, path string, retry time.Duration, start func() (stop func())) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if release, err := TryLead(path); err == nil {
				end := start()
				<-ctx.Done()
				end()
				release()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
		}
	})
	return sync.OnceFunc(func() {
		cancel()
		wg.Wait()
	})
}

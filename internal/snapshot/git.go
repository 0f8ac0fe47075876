package snapshot

import (
	"context"
	"errors"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// lockWait bounds how long a call waits for another process's git lock.
const lockWait = 5 * time.Second

// runGit runs git with args in dir and returns its standard output. A call
// that fails because a git lock file is held is retried until lockWait;
// unlock, when not nil, may remove a stale lock and report that it did.
func runGit(ctx context.Context, dir string, o git.Options, unlock func(*git.Error) bool, args ...string) ([]byte, error) {
	deadline := time.Now().Add(lockWait)
	delay := 10 * time.Millisecond
	for {
		out, err := git.RunWith(ctx, dir, o, args...)
		if err == nil {
			return out, nil
		}
		var ge *git.Error
		if !errors.As(err, &ge) || !ge.LockBusy() {
			return nil, err
		}
		if unlock != nil && unlock(ge) {
			continue
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

package snapshot

import (
	"context"
	"errors"
	"os"
	"slices"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// lockWait bounds how long a call waits for another process's git lock.
const lockWait = 5 * time.Second

// runGit runs git with args in dir and returns its standard output. A call
// that fails because a git lock file is held is retried until lockWait;
// holders, when not nil, records each call as a holder of the private
// index and may remove a stale lock on it.
func runGit(ctx context.Context, dir string, o git.Options, holders *indexHolders, args ...string) ([]byte, error) {
	deadline := time.Now().Add(lockWait)
	delay := 10 * time.Millisecond
	for {
		call := o
		var held *os.File
		if holders != nil {
			if held = holders.hold(); held != nil {
				call.Inherit = append(slices.Clip(o.Inherit), held)
			}
		}
		out, err := git.RunWith(ctx, dir, call, args...)
		if held != nil {
			held.Close()
		}
		if err == nil {
			return out, nil
		}
		var ge *git.Error
		if !errors.As(err, &ge) || !ge.LockBusy() {
			return nil, err
		}
		if holders != nil && holders.removeStale(ge) {
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

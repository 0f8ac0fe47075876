package serve

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/filelock"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// LockFile is the name, under .ralph/, of the file a dashboard holds
// locked while it serves, with its pid and address in it: one dashboard
// per workspace, so a second one cannot replace the first's token.
const LockFile = workspace.ServeLock

// BusyError means another dashboard serves the workspace.
type BusyError struct {
	// PID and Addr are the other dashboard's, when it recorded them.
	PID  int
	Addr string
}

func (e *BusyError) Error() string {
	msg := "another ralph serve serves this workspace"
	if e.PID != 0 {
		msg = fmt.Sprintf("another ralph serve (pid %d) serves this workspace", e.PID)
	}
	if e.Addr != "" {
		msg += " at " + e.Addr
	}
	return msg + ": open its URL (the token is in .ralph/" + TokenFile + ") or stop it first"
}

// Lock is a held dashboard lock. The operating system releases it when
// the process dies.
type Lock struct{ f *os.File }

// LockWorkspace takes ws's dashboard lock, or fails with a *BusyError
// when another live dashboard holds it.
func LockWorkspace(ws *workspace.Workspace) (*Lock, error) {
	if err := os.MkdirAll(ws.StateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lock dashboard: %w", err)
	}
	f, err := os.OpenFile(ws.Path(LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock dashboard: %w", err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		if !errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("lock dashboard: %w", err)
		}
		data, _ := os.ReadFile(ws.Path(LockFile))
		be := &BusyError{}
		fields := strings.Fields(string(data))
		if len(fields) > 0 {
			be.PID, _ = strconv.Atoi(fields[0])
		}
		if len(fields) > 1 {
			be.Addr = fields[1]
		}
		return nil, be
	}
	l := &Lock{f: f}
	l.Record("")
	return l, nil
}

// Record writes the dashboard's pid and address (a URL without the
// token) into the lock file, for a second dashboard's error message.
func (l *Lock) Record(addr string) {
	if err := l.f.Truncate(0); err == nil {
		_, _ = l.f.WriteAt([]byte(strings.TrimSpace(strconv.Itoa(os.Getpid())+" "+addr)+"\n"), 0)
	}
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the file releases the lock
	l.f = nil
	return err
}

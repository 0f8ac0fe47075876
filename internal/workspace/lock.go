package workspace

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/filelock"
	"github.com/ralph-harness/ralph/internal/proc"
)

// LockedError means another ralph process drives the workspace.
type LockedError struct {
	// PID is the holder's process id, 0 when it could not be read.
	PID int
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return "workspace is locked by another ralph process"
	}
	return fmt.Sprintf("workspace is locked by another ralph process (pid %d); wait for it, or `ralph stop` it", e.PID)
}

// Lock is a held workspace lock. The operating system releases it when
// the process dies, so a crash never leaves a stale lock behind.
type Lock struct {
	f *os.File
}

// deadHolderGrace is how long Lock waits for a lock whose recorded holder
// is dead. A ralph killed with SIGKILL while it was starting a program
// leaves that program holding a copy of the lock until its exec, which on
// a loaded machine can take a moment after the kill.
const deadHolderGrace = 3 * time.Second

// Lock takes the workspace lock. It fails at once with a *LockedError
// naming the holder's pid when another live process holds it; when the
// recorded holder is dead it waits up to deadHolderGrace for the lock to
// come free.
func (w *Workspace) Lock() (*Lock, error) {
	if err := os.MkdirAll(w.StateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lock workspace: %w", err)
	}
	f, err := os.OpenFile(w.Path(LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock workspace: %w", err)
	}
	for deadline := time.Now().Add(deadHolderGrace); ; time.Sleep(20 * time.Millisecond) {
		err := filelock.TryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, filelock.ErrLocked) {
			f.Close()
			return nil, fmt.Errorf("lock workspace: %w", err)
		}
		data, _ := os.ReadFile(w.Path(LockFile))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		if pid <= 0 || proc.Alive(pid) || time.Now().After(deadline) {
			f.Close()
			return nil, &LockedError{PID: pid}
		}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// HolderPID returns the pid recorded by the process holding the lock, or 0
// when no live process holds it. It never takes the lock itself, so a
// read-only command cannot make a starting run fail.
func (w *Workspace) HolderPID() int {
	data, err := os.ReadFile(w.Path(LockFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 {
		return 0
	}
	if !proc.Alive(pid) {
		return 0
	}
	return pid
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := filelock.Unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

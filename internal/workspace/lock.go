package workspace

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// Lock takes the workspace lock without waiting. It fails at once with a
// *LockedError naming the holder's pid when another process holds it.
func (w *Workspace) Lock() (*Lock, error) {
	if err := os.MkdirAll(w.StateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lock workspace: %w", err)
	}
	f, err := os.OpenFile(w.Path(LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock workspace: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			data, _ := os.ReadFile(w.Path(LockFile))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, &LockedError{PID: pid}
		}
		return nil, fmt.Errorf("lock workspace: %w", err)
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
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
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
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

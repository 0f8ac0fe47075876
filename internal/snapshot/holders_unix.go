//go:build unix

package snapshot

import (
	"os"
	"syscall"
)

// lockShared takes a shared lock on f, waiting while a process holds it
// exclusively (only ever for the moment of removing a stale lock file).
func lockShared(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}

// lockExclusiveNow takes an exclusive lock on f if no process holds any
// lock on it, without waiting.
func lockExclusiveNow(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

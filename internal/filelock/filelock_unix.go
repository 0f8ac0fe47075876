//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive lock on f, or returns ErrLocked at once when
// another open file holds it.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// Unlock gives f's lock up. Closing f does too.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

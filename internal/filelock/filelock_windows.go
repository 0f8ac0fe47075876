package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// region is where the lock is taken: one byte at the highest offset, past
// any content, so readers of the file are not refused.
func region() *windows.Overlapped {
	return &windows.Overlapped{Offset: 0xFFFFFFFF, OffsetHigh: 0x7FFFFFFF}
}

// TryLock takes an exclusive lock on f, or returns ErrLocked at once when
// another open file holds it.
func TryLock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, region())
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrLocked
	}
	return err
}

// Unlock gives f's lock up. Closing f does too.
func Unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, region())
}

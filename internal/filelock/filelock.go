// Package filelock takes exclusive locks on open files without waiting:
// flock(2) on Unix, LockFileEx on Windows. The operating system drops a
// process's locks when it dies, so a crash never leaves a stale lock.
// Two opens of the same file conflict even within one process.
//
// A lock covers no byte a reader needs: on Windows, where locks are
// mandatory, it is taken on one byte far past the end of the file, so
// another process can still read what the holder wrote there (a pid, an
// address).
package filelock

import "errors"

// ErrLocked means another open file holds the lock.
var ErrLocked = errors.New("locked by another process")

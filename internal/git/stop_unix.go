//go:build unix

package git

import (
	"os"
	"syscall"
)

// stop asks git to stop (SIGTERM), so that it removes its lock files.
func stop(p *os.Process) error { return p.Signal(syscall.SIGTERM) }

//go:build unix

package proc

import (
	"syscall"
	"time"
)

// terminate sends SIGTERM to the group, then SIGKILL after grace, and
// returns the leader's wait error.
func terminate(pgid int, grace time.Duration, exited <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-exited
	}
}

// killGroup sends SIGKILL to the whole group.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// adopt does nothing on Unix: the process leads its own group already.
func adopt(pid int) {}

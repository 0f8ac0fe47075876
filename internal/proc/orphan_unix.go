//go:build unix

package proc

import (
	"context"
	"syscall"
	"time"
)

// EndOrphan ends o: SIGTERM, then SIGKILL to what is left after grace. It
// re-judges the group before each signal, so it never signals a process
// that has stopped belonging to it, and reports whether nothing of the
// group runs at the end.
func EndOrphan(ctx context.Context, o Orphan, t ProcessTable, grace time.Duration) bool {
	signalAll := func(sig syscall.Signal) bool {
		v, cur := Judge(o.Group, t)
		if v != Orphaned {
			return v == Gone
		}
		if cur.Whole {
			_ = syscall.Kill(-cur.PGID, sig)
		}
		for _, pid := range cur.PIDs {
			_ = syscall.Kill(pid, sig)
		}
		return false
	}
	wait := func(d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			if v, _ := Judge(o.Group, t); v != Orphaned {
				return v == Gone
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return false
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if signalAll(syscall.SIGTERM) || wait(grace) {
		return true
	}
	if signalAll(syscall.SIGKILL) {
		return true
	}
	return wait(time.Second)
}

package proc

import (
	"context"
	"time"
)

// EndOrphan ends nothing on Windows: a group's processes are in a job
// object that the system ends when the ralph holding it dies, and no
// process table is read here, so no group is ever judged orphaned. It
// reports whether the group is judged gone.
func EndOrphan(ctx context.Context, o Orphan, t ProcessTable, grace time.Duration) bool {
	v, _ := Judge(o.Group, t)
	return v == Gone
}

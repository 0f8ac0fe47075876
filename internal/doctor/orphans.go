package doctor

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/store"
)

// orphanGrace is how long an orphaned group has between SIGTERM and
// SIGKILL.
const orphanGrace = 2 * time.Second

// EndedOrphan is one orphaned process group ralph ended.
type EndedOrphan struct {
	PGID      int    `json:"pgid"`
	Program   string `json:"program"`
	Processes int    `json:"processes"`
	RalphPID  int    `json:"ralph_pid"`
	Task      int64  `json:"task_id,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	// Ended is false when a process of the group survived SIGKILL.
	Ended bool `json:"ended"`
}

func (o EndedOrphan) String() string {
	where := ""
	if o.Iteration > 0 {
		where = fmt.Sprintf(", iteration %d", o.Iteration)
	}
	verb := "ended"
	if !o.Ended {
		verb = "could not end"
	}
	group := fmt.Sprintf("process group %d, ", o.PGID)
	if o.PGID == 0 {
		group = "" // its ralph died before the group's id was on record
	}
	return fmt.Sprintf("%s %s (%s%d processes%s) left running by a ralph that died (pid %d)",
		verb, o.Program, group, o.Processes, where, o.RalphPID)
}

// EndOrphans ends the process groups recorded in st whose ralph has died
// but which still run (SIGTERM, then SIGKILL after orphanGrace), marks
// the records of groups that are gone ended, and returns what it ended.
// Groups of a live ralph, and groups never recorded, are never touched.
func EndOrphans(ctx context.Context, st *store.Store) ([]EndedOrphan, error) {
	rows, err := st.RunningProcGroups(ctx)
	if err != nil {
		return nil, err
	}
	groups := make([]proc.Group, len(rows))
	byID := map[int64]store.ProcGroup{}
	for i, r := range rows {
		groups[i] = proc.Group{ID: r.ID, PGID: r.PGID, LeaderStart: r.LeaderStart, Token: r.Token, OwnerPID: r.RalphPID, OwnerStart: r.RalphStart, Argv0: r.Argv0}
		byID[r.ID] = r
	}
	table := proc.Processes()
	orphans, gone := proc.FindOrphans(groups, table)
	for _, g := range gone {
		_ = st.EndProcGroup(ctx, g.ID, "gone when found")
	}
	var out []EndedOrphan
	for _, o := range orphans {
		r := byID[o.ID]
		ok := proc.EndOrphan(ctx, o, table, orphanGrace)
		if ok {
			_ = st.EndProcGroup(ctx, o.ID, "orphaned: ended by a later ralph")
		}
		out = append(out, EndedOrphan{PGID: o.PGID, Program: o.Argv0, Processes: len(o.PIDs), RalphPID: o.OwnerPID, Task: r.TaskID, Iteration: r.Iteration, Ended: ok})
	}
	return out, nil
}

// EndOrphansBeforeRun ends orphaned groups before a run starts its own
// agent, with one line on w for each.
func EndOrphansBeforeRun(ctx context.Context, st *store.Store, w io.Writer) error {
	ended, err := EndOrphans(ctx, st)
	if err != nil {
		return err
	}
	for _, o := range ended {
		fmt.Fprintf(w, "ralph: %s\n", o)
	}
	return nil
}

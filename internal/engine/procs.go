package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/store"
)

// RecordProcGroups returns a context under which every process group
// started through package proc is recorded in st when it starts and marked
// ended, with st's next write, when it ends (store.EndProcGroupLater), so
// a later ralph can end the groups a dead ralph left running. ready, if
// not nil, is waited for before each group is recorded; its error refuses
// the start. where names the task and iteration a group belongs to
// (nil for none); escaped, if not nil, hears about a process that left its
// group holding the output (proc.Result.EscapeNote), from the goroutine
// that ran it.
func RecordProcGroups(ctx context.Context, st *store.Store, where func() (taskID int64, iteration int), escaped func(argv0, note string), ready func() error) context.Context {
	pid, start := proc.Self()
	// Records outlive a cancelled run: the row must say the group ended.
	bg := context.WithoutCancel(ctx)
	return proc.WithStartHook(ctx, func(s proc.Started) proc.Recording {
		if ready != nil {
			if err := ready(); err != nil {
				return proc.Recording{Refused: err}
			}
		}
		// On record before the group starts, by its token: a kill of
		// ralph and its supervisor right after the start leaves nothing
		// a later ralph cannot find.
		g := store.ProcGroup{Token: s.Token, RalphPID: pid, RalphStart: start, Argv0: s.Argv0}
		if where != nil {
			g.TaskID, g.Iteration = where()
		}
		id, err := st.StartProcGroup(bg, g)
		started := false
		return proc.Recording{
			Started: func(s proc.Started) {
				started = true
				if err == nil {
					_ = st.SetProcGroupLeader(bg, id, s.PGID, s.LeaderStart)
				}
			},
			Done: func(res proc.Result) {
				note := "exited"
				if !started {
					note = "not started"
				}
				if res.Escaped != nil {
					note = "escaped: " + res.EscapeNote()
					if escaped != nil {
						escaped(s.Argv0, res.EscapeNote())
					}
				}
				if err == nil {
					st.EndProcGroupLater(id, note)
				}
			},
		}
	})
}

// escapes collects escape notes from whatever goroutine ran a process,
// for the engine's goroutine to report.
type escapes struct {
	mu    sync.Mutex
	notes []string
}

func (x *escapes) add(argv0, note string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.notes = append(x.notes, fmt.Sprintf("%s: %s", argv0, note))
}

func (x *escapes) take() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := x.notes
	x.notes = nil
	return n
}

// withProcRecording records the process groups the loop starts under the
// run's task and current iteration.
func (e *Engine) withProcRecording(ctx context.Context, r *run) context.Context {
	return RecordProcGroups(ctx, e.st, func() (int64, int) { return r.taskID, r.iteration }, r.escapes.add, r.begun.wait)
}

// reportEscapes records and shows, one line each, the processes that left
// their group holding its output since the last call.
func (e *Engine) reportEscapes(r *run) {
	for _, n := range r.escapes.take() {
		e.harnessEvent(r, "escaped", "a process escaped: "+n, "")
	}
}

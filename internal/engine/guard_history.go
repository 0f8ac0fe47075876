package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ralph-harness/ralph/internal/guard"
	"github.com/ralph-harness/ralph/internal/proc"
)

// The history guard (SPEC §2: any move of the user's branch that drops
// commits is undone and reported) runs before an iteration's prompt is
// built, after each agent run (before its completion signal is read), and
// when the task ends. Each run compares the repository with the task's
// origin and the last mark, so a change in an iteration that was killed is
// caught by the next one.

// historyKey holds a task's historyRecord. The store, not a file the
// agent can write, is where the task's origin lives.
func historyKey(taskID int64) string { return fmt.Sprintf("task:%d:history", taskID) }

// historyRecord is the history guard's state for one task.
type historyRecord struct {
	// Origin is the branch and commit the task started from, read before
	// the agent first ran.
	Origin guard.Origin `json:"origin"`
	// Mark is the branch tip and snapshot refs as the last hook left them.
	Mark *guard.HistoryMark `json:"mark,omitempty"`
}

// guardHistory compares the repository with the task's origin and the
// last mark, puts back what the agent changed (reporting it, with a note
// for the agent's next prompt), and takes a new mark.
func (e *Engine) guardHistory(ctx context.Context, r *run) {
	rec, raw, ok, err := e.historyRecord(ctx, r)
	if err != nil {
		e.log.Warn("read the history guard's record", "task", r.number, "err", err)
		return
	}
	if !ok {
		// First hook of the task: nothing has run yet that could have
		// moved the branch. Outside a git repository there is no history
		// to guard.
		if rec.Origin, err = guard.ReadOrigin(ctx, e.ws.Root); err != nil {
			e.log.Debug("no history to guard", "err", err)
			return
		}
	}
	var mark guard.HistoryMark
	if rec.Mark == nil {
		mark, err = guard.ReadHistoryMark(ctx, e.ws.Root, rec.Origin)
	} else {
		r.historyChecks++
		keep := fmt.Sprintf("task-%d-iteration-%d-check-%d", r.number, r.iteration, r.historyChecks)
		var rep guard.HistoryReport
		rep, mark, err = guard.History(ctx, e.ws.Root, rec.Origin, *rec.Mark, keep)
		if rep.Changed() {
			data, _ := json.Marshal(struct {
				What string `json:"what"`
				guard.HistoryReport
			}{"history", rep})
			e.tamper(r, rep.String(), json.RawMessage(data))
			r.guardNotes = append(r.guardNotes, rep.Feedback())
		}
	}
	r.historyQuiet = quietCheck{}
	if err != nil {
		// The last mark stays: the next hook compares with it.
		e.log.Warn("guard the history", "task", r.number, "err", err)
	} else {
		rec.Mark = &mark
		r.historyQuiet = quietCheck{at: e.now(), runs: proc.Runs(), ok: true}
	}
	if c := r.history; ok && c != nil && c.taskID == r.taskID && sameRecord(c.rec, rec) {
		// As stored: no need to encode it (a mark of many snapshot refs
		// takes a while). The mark kept is the latest read's, which the
		// next check can tell unchanged without comparing.
		c.rec = rec
		return
	}
	b, err := json.Marshal(rec)
	if err != nil || (ok && string(b) == raw) {
		return
	}
	if err := e.st.SetState(ctx, historyKey(r.taskID), string(b)); err != nil {
		e.log.Error("record the history guard's state", "task", r.number, "err", err)
		r.history = nil
		return
	}
	r.history = &historyCache{taskID: r.taskID, rec: rec, raw: string(b)}
}

// quietFor is how long after a history check a program-free stretch
// counts as quiet: what a person does to the repository meanwhile (while
// ralph waits for them, say) is then seen by the next check.
const quietFor = time.Second

// quietCheck is a history check that ended without an error: the
// repository is as its mark says (what the check found, it put back).
type quietCheck struct {
	at   time.Time
	runs int64 // proc.Runs() after the check
	ok   bool
}

// guardHistoryBeforeAgent is the check before the agent runs, skipped
// when the check after the last agent run (or the gates after it) ended
// without an error, no program started since and none runs (another spec's agent,
// in parallel): only ralph has touched the repository since, and nothing
// of ralph's moves the branch or the snapshot refs behind the mark's
// back.
func (e *Engine) guardHistoryBeforeAgent(ctx context.Context, r *run) {
	if r.historyQuiet.holds(proc.Runs(), proc.Running(), e.now()) {
		return
	}
	e.guardHistory(ctx, r)
}

// holds reports whether the check q still stands at now, when Run has
// started runs programs in all and running are under way.
func (q quietCheck) holds(runs, running int64, now time.Time) bool {
	return q.ok && q.runs == runs && running == 0 && now.Sub(q.at) < quietFor
}

// historyCache is a task's historyRecord as the store holds it, kept by
// the run that last read or wrote it: only this run writes the task's
// record, so each check need not read it back.
type historyCache struct {
	taskID int64
	rec    historyRecord
	raw    string
}

// sameRecord reports whether two history records say the same.
func sameRecord(a, b historyRecord) bool {
	if a.Origin != b.Origin || (a.Mark == nil) != (b.Mark == nil) {
		return false
	}
	return a.Mark == nil || a.Mark.Same(*b.Mark)
}

// historyRecord returns the task's record and its stored form; ok is
// false when the store holds none (or one that does not parse).
func (e *Engine) historyRecord(ctx context.Context, r *run) (rec historyRecord, raw string, ok bool, err error) {
	if c := r.history; c != nil && c.taskID == r.taskID {
		// The mark's refs are shared, never modified (guard.HistoryMark).
		return c.rec, c.raw, true, nil
	}
	raw, ok, err = e.st.State(ctx, historyKey(r.taskID))
	if err != nil || !ok {
		return historyRecord{}, "", false, err
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		e.log.Warn("read the history guard's record", "task", r.number, "err", err)
		return historyRecord{}, "", false, nil
	}
	r.history = &historyCache{taskID: r.taskID, rec: rec, raw: raw}
	return rec, raw, true, nil
}

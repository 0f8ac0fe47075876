package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-harness/ralph/internal/guard"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// The history guard's hooks (SPEC §2: any move of the user's branch that
// drops commits is undone and reported). markHistory runs before the agent
// of an iteration starts, checkHistory after it returns and before its
// completion signal is read, and guardAtEnd when the task ends. Each
// compares the repository with the task's origin and the last mark (so a
// change in an iteration that was killed, or that ended in an agent error,
// is caught by the next hook), puts back what the agent changed, and takes
// a new mark.

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
	// Note is feedback about a change the harness undid that the agent
	// has not been shown yet: the next prompt carries it.
	Note string `json:"note,omitempty"`
}

// markHistory is the hook before the agent runs: it checks, marks, and
// puts any pending note at the top of feedback.md for the prompt.
func (e *Engine) markHistory(ctx context.Context, r *run) {
	e.guardHistory(ctx, r, true)
}

// checkHistory is the hook after the agent ran: it checks and marks.
func (e *Engine) checkHistory(ctx context.Context, r *run) {
	e.guardHistory(ctx, r, false)
}

// guardAtEnd is the hook when the task ends: a last check (the last
// iteration may have ended before checkHistory ran), and what the final
// line adds about the agent's changes the harness undid.
func (e *Engine) guardAtEnd(ctx context.Context, r *run) string {
	e.guardHistory(ctx, r, false)
	return e.tamperNote(ctx, r)
}

func (e *Engine) guardHistory(ctx context.Context, r *run, beforeAgent bool) {
	var rec historyRecord
	raw, ok, err := e.st.State(ctx, historyKey(r.taskID))
	if err != nil {
		e.log.Warn("read the history guard's record", "task", r.number, "err", err)
		return
	}
	if ok {
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			e.log.Warn("read the history guard's record", "task", r.number, "err", err)
			ok = false
		}
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
		keep := fmt.Sprintf("task-%d-iteration-%d", r.number, r.iteration)
		var rep guard.HistoryReport
		rep, mark, err = guard.History(ctx, e.ws.Root, rec.Origin, *rec.Mark, keep)
		if rep.Changed() {
			data, _ := json.Marshal(struct {
				What string `json:"what"`
				guard.HistoryReport
			}{"history", rep})
			e.tamper(ctx, r, rep.String(), string(data))
			rec.Note = rep.Feedback()
			e.prependFeedback(rec.Note)
		}
	}
	if err != nil {
		// The last mark stays: the next hook compares with it.
		e.log.Warn("guard the history", "task", r.number, "err", err)
	} else {
		rec.Mark = &mark
	}
	if beforeAgent && rec.Note != "" {
		// Gate feedback written since may have replaced it.
		e.prependFeedback(rec.Note)
		rec.Note = ""
	}
	b, err := json.Marshal(rec)
	if err != nil || (ok && string(b) == raw) {
		return
	}
	if err := e.st.SetState(ctx, historyKey(r.taskID), string(b)); err != nil {
		e.log.Error("record the history guard's state", "task", r.number, "err", err)
	}
}

// prependFeedback puts note above what feedback.md holds, unless it is
// there already.
func (e *Engine) prependFeedback(note string) {
	current, _ := e.ws.Read(workspace.Feedback)
	if strings.Contains(current, note) {
		return
	}
	if strings.TrimSpace(current) != "" {
		note += "\n" + current
	}
	if err := e.ws.Write(workspace.Feedback, note); err != nil {
		e.log.Error("write feedback.md", "err", err)
	}
}

// tamper records and shows an agent's change that the harness undid: a
// "tamper" event whose data is JSON with a "what" (history, files, …),
// and a warning line.
func (e *Engine) tamper(ctx context.Context, r *run, text, data string) {
	if _, err := e.st.AddEvent(ctx, store.Event{TaskID: r.taskID, Iteration: r.iteration, Source: store.SourceHarness, Kind: "tamper", Text: text, Data: data}); err != nil {
		e.log.Error("record event", "err", err)
	}
	e.report(r, Progress{Stage: StageWarning, Message: text})
}

// tamperNote is what the final line adds about the agent's changes the
// harness undid in the task, from its tamper events whatever guard wrote
// them: " (the harness undid 2 agent changes: history, files)", or "".
func (e *Engine) tamperNote(ctx context.Context, r *run) string {
	events, err := e.st.EventsPage(ctx, store.EventQuery{TaskID: r.taskID, Kind: "tamper", Limit: 10000})
	if err != nil || len(events) == 0 {
		return ""
	}
	var whats []string
	for _, ev := range events {
		var d struct {
			What string `json:"what"`
		}
		if json.Unmarshal([]byte(ev.Data), &d) == nil && d.What != "" && !slices.Contains(whats, d.What) {
			whats = append(whats, d.What)
		}
	}
	slices.Reverse(whats) // EventsPage is newest first
	changes := "1 agent change"
	if len(events) > 1 {
		changes = fmt.Sprintf("%d agent changes", len(events))
	}
	return fmt.Sprintf(" (the harness undid %s: %s)", changes, strings.Join(whats, ", "))
}

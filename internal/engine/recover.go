package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// recoverStall acts on a stall verdict (SPEC §10). The first in a task
// saves stall-N-recovery and writes plan-aware guidance to feedback.md;
// the second rolls back to task-N-pre and ends the run as stalled.
func (e *Engine) recoverStall(ctx context.Context, r *run, det *stall.Detector, v stall.Verdict) (Reason, string) {
	evidence, _ := json.Marshal(v.Evidence)
	action := store.StallRecovered
	second := det.Recoveries() >= 1
	if second {
		action = store.StallRolledBack
	}
	if err := e.st.AddStall(ctx, store.Stall{TaskID: r.taskID, Iteration: r.iteration, Kind: v.Kind.String(), Reason: v.Reason, Evidence: string(evidence), Action: action}); err != nil {
		e.log.Error("record stall", "err", err)
	}
	e.report(r, Progress{Stage: StageStall, Message: "stall: " + v.Reason})

	if second {
		pre := snapshot.TaskPre(r.number)
		detail := fmt.Sprintf("the agent stalled twice in task %d (%s)", r.number, v.Reason)
		if e.opt.Snapshots != nil {
			if ok, _ := e.opt.Snapshots.Exists(ctx, pre); ok {
				undo, err := e.opt.Snapshots.Rollback(ctx, pre)
				if err != nil {
					detail += "; rollback to " + pre + " failed: " + err.Error()
				} else {
					detail += fmt.Sprintf("; rolled back to %s (undo with `ralph snapshot rollback %s`)", pre, undo.Name)
				}
			}
		}
		_ = e.ws.SetStatus(workspace.StatusFailed)
		_ = e.ws.Write(workspace.Feedback, stall.FailureMessage(r.number))
		e.harnessEvent(r, "stall", detail, string(evidence))
		e.notify(ctx, "ralph: "+detail)
		return Stalled, detail
	}

	name := snapshot.StallRecovery(r.number)
	if e.opt.Snapshots != nil {
		if snap, err := e.opt.Snapshots.Save(ctx, name, "stall recovery: "+v.Reason); err == nil {
			_ = e.st.AddSnapshot(ctx, store.Snapshot{Name: snap.Name, Commit: snap.Commit, Task: r.number, Kind: string(snap.Kind), Message: snap.Message})
		}
	}
	in := stall.GuidanceInput{Verdict: v, LastActions: det.RecentCalls()}
	if content := e.ws.PlanContent(); content != "" {
		if root, err := plan.Parse([]byte(content)); err == nil {
			if sec, ok := stall.FindSection(in.LastActions, planSections(root, r.number)); ok {
				in.Section = sec
			}
		}
	}
	// The guidance goes above the current feedback (gate failures, plan
	// failures, build instructions), not in place of it.
	current, _ := e.ws.Read(workspace.Feedback)
	_ = e.ws.Write(workspace.Feedback, stall.WithFeedback(stall.Guidance(in), current))
	_ = e.ws.SetStatus(workspace.StatusRunning)
	det.Reset()
	det.NoteRecovery()
	where := ""
	if in.Section.File != "" {
		where = " on " + in.Section.File
	}
	e.harnessEvent(r, "stall", fmt.Sprintf("stall detected%s: %s; saved %s and wrote recovery guidance to feedback.md", where, v.Reason, name), string(evidence))
	return "", ""
}

// notify tells a person something needs attention.
func (e *Engine) notify(ctx context.Context, msg string) {
	if e.opt.Notify != nil {
		e.opt.Notify(ctx, msg)
	}
}

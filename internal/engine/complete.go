package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// complete is the one completion handler, for every signal. In the PLAN
// phase with a plan written the signal is deferred: the plan is validated
// at the top of the next iteration. Otherwise the gates decide.
func (e *Engine) complete(ctx context.Context, r *run, signal string) (outcome string, end Reason, detail string, errs []string) {
	// The protected-files check's read serves this completion's
	// task-N-post only.
	defer r.endRead.drop()
	if content := e.ws.PlanContent(); e.ws.Phase() == workspace.PhasePlan && content != "" && e.planUnchanged(ctx, r, content) {
		// The previous task's plan, untouched: no iteration validates it,
		// so asking to finish is no progress until the plan changes.
		_ = e.ws.SetStatus(workspace.StatusRunning)
		_ = e.ws.Write(workspace.Feedback, e.planUpdateNeeded(r))
		e.harnessEvent(r, "complete-deferred", fmt.Sprintf("%s, but .ralph/plan.tsx is still the previous task's: nothing to validate until it is updated for task %d", signal, r.number), "")
		r.idle = true
		return outDeferred, "", "", []string{"asked to finish with the previous task's plan unchanged"}
	}
	if e.ws.Phase() == workspace.PhasePlan && e.ws.PlanContent() != "" {
		_ = e.ws.SetStatus(workspace.StatusRunning)
		e.harnessEvent(r, "complete-deferred", fmt.Sprintf("%s, but the task is in the PLAN phase with a plan written: completion deferred, the plan is validated next iteration", signal), "")
		return outDeferred, "", "", nil
	}
	if end, detail := e.guardProtected(ctx, r); end != "" {
		out := outProtected
		if end != ProtectedChanged {
			out = outInterrupt
		}
		return out, end, detail, nil
	}
	env := gate.Env{Root: e.ws.Root, Task: r.number, Iteration: r.iteration}
	if slices.ContainsFunc(e.opt.Gates, func(g gate.Gate) bool { return mayWriteTheTree(g, env) }) {
		r.endRead.drop() // a process it starts may write anywhere in the tree
	}
	e.harnessEvent(r, "gates", fmt.Sprintf("%s: running %d quality gates", signal, len(e.opt.Gates)), "")
	results := gate.RunAll(ctx, e.opt.Gates, env)
	e.reportEscapes(r)
	pausepoint.At(pausepoint.Gates)
	if ctx.Err() != nil {
		return outInterrupt, Interrupted, "interrupted while the gates ran; run `ralph resume` to continue", nil
	}
	rows := make([]store.GateResult, len(results))
	for i, res := range results {
		rows[i] = store.GateResult{TaskID: r.taskID, Iteration: r.iteration, Gate: res.Gate, Status: string(res.Status), Message: res.Message, Fix: res.Fix}
	}
	if err := e.st.AddGateResults(ctx, rows); err != nil {
		e.log.Error("record gate results", "err", err)
	}
	e.report(r, Progress{Stage: StageGates, Message: gate.Summary(results), Gates: results})

	failed := gate.Failed(results)
	if len(failed) == 0 {
		if e.stepPassed(ctx, r) { // an orchestration plan goes on to its next step
			return outStepDone, "", "", nil
		}
		// From here on a resume finishes the task without the agent.
		_ = e.st.SetState(ctx, gatesPassedKey(r.taskID), strconv.Itoa(r.iteration))
		_ = e.ws.SetStatus(workspace.StatusComplete)
		if w := gate.Warnings(results); len(w) > 0 {
			_ = e.ws.Write(workspace.Feedback, gate.Feedback(w))
		}
		e.snapshotPost(ctx, r)
		if e.unverified() {
			return outCompleted, Completed, fmt.Sprintf("only ralph's built-in gates ran: %s, after %d iterations", gate.Tally(results), r.iteration), nil
		}
		return outCompleted, Completed, fmt.Sprintf("all quality gates passed (%s) after %d iterations", gate.Tally(results), r.iteration), nil
	}

	r.gateFailures++
	_ = e.ws.Write(workspace.Feedback, gate.Feedback(results))
	e.writeGuardNotes(r)
	_ = e.ws.SetStatus(workspace.StatusRunning)
	for _, f := range failed {
		errs = append(errs, f.Gate+": "+f.Message)
	}
	names := make([]string, len(failed))
	for i, f := range failed {
		names[i] = f.Gate
	}
	e.harnessEvent(r, "gates-failed", fmt.Sprintf("gates failed (%s); feedback.md says how to fix them (%d of %d attempts)", strings.Join(names, ", "), r.gateFailures, e.opt.Limits.GateFailures), "")
	if r.gateFailures >= e.opt.Limits.GateFailures {
		return outGatesFail, GateFailures, fmt.Sprintf("the quality gates failed %d times in a row (last: %s)", r.gateFailures, strings.Join(names, ", ")), errs
	}
	return outGatesFail, "", "", errs
}

// treeWriter is a gate that says whether its Check, run at env, may write
// files of the tree that snapshots hold: a process it starts that the
// agent controls (a command, package.json's build script, a test the
// agent wrote) may write anywhere in it.
type treeWriter interface {
	MayWriteTree(env gate.Env) bool
}

// mayWriteTheTree reports whether gate g, run at env, may write files of
// the tree that snapshots hold, as g says (treeWriter); a gate that does
// not say may.
func mayWriteTheTree(g gate.Gate, env gate.Env) bool {
	if w, ok := g.(treeWriter); ok {
		return w.MayWriteTree(env)
	}
	return true
}

// snapshotPost saves task-N-post after the gates pass.
func (e *Engine) snapshotPost(ctx context.Context, r *run) {
	if e.opt.Snapshots == nil {
		return
	}
	name := snapshot.TaskPost(r.number)
	if ok, _ := e.opt.Snapshots.Exists(ctx, name); ok {
		// A run killed after saving it; the tree has not changed since.
		if err := e.recordSnapshot(ctx, name, r.number); err != nil {
			e.harnessEvent(r, "snapshot-error", "could not record "+name+": "+err.Error(), "")
		}
		return
	}
	// The protected-files check's whole read, with what the harness wrote
	// since, or a whole read: not the Tracker's paths alone. task-N-post
	// is what a rollback restores, and a change the directory watches
	// never see (a write through a hard link from outside the tree, a
	// network file system, an exclude rule changed in .git) must still be
	// in it.
	snap, err := e.opt.Snapshots.SaveChanged(ctx, name, fmt.Sprintf("after task %d", r.number), e.postChanges(ctx, r))
	r.tree.recorded(snap.Tree)
	if err != nil {
		e.harnessEvent(r, "snapshot-error", "could not save "+name+": "+err.Error(), "")
		return
	}
	pausepoint.At(pausepoint.PostSnapshot)
	_ = e.st.AddSnapshot(ctx, store.Snapshot{Name: snap.Name, Commit: snap.Commit, Task: r.number, Kind: string(snap.Kind), Message: snap.Message})
	e.harnessEvent(r, "snapshot", "saved "+snap.Name+" ("+snap.ShortCommit()+")", "")
}

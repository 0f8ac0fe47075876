package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/mutation"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Iteration outcomes recorded in the store.
const (
	outContinue  = "continue"
	outDeferred  = "complete-deferred"
	outGatesFail = "gates-failed"
	outCompleted = "completed"
	outTimeout   = "timeout"
	outIdle      = "idle"
	outAgentErr  = "agent-error"
	outInterrupt = "interrupted"
	outExhausted = "agent-exhausted"
)

// loop runs iterations until the task ends.
func (e *Engine) loop(ctx context.Context, r *run) (Outcome, error) {
	ctx = e.withProcRecording(ctx, r)
	// The task's own gates, and what an agent killed mid-iteration left in
	// the harness's files, before anything reads them.
	e.taskGates(ctx, r)
	e.undoLeftover(ctx, r)
	if r.tree.tracker == nil {
		// A resumed task: its Tracker starts here, knowing no tree.
		r.tree = e.watchTree(ctx, false)
	}
	defer r.tree.close()
	r.tree.ready()
	tracker := r.tree.tracker
	// The chain of the task's iterations is written in the background;
	// it is whole when the task ends (finish) or its loop returns.
	defer e.flushIterations()
	if r.iteration == 0 && e.opt.Snapshots != nil {
		// The tree as the task's start left it: what its first
		// iteration's change is measured from. The pre-task snapshot's
		// tree and the Tracker's changes since, when it has them,
		// written beside the rest of the first iteration's start (the
		// guard's mark, the prompt; its gits took a tenth of a task's
		// start at 100,000 files): the agent's call, the end and every
		// later read of the Tracker's changes wait for it.
		changes := e.treeChanges(ctx, r, true)
		r.tree.recordBehind(func() string {
			tree, err := e.opt.Snapshots.SaveIteration(ctx, r.number, 0, changes)
			if err != nil {
				e.log.Warn("record the task's starting tree", "err", err)
			}
			return tree
		})
		defer r.tree.settle() // before the chain is flushed
	}
	start := e.now()
	det := stall.NewDetector(e.opt.Stall)
	// A resumed task remembers its recoveries: the next stall after one
	// is the second, which ends the task.
	recovered, err := e.st.StallRecoveries(ctx, r.taskID)
	if err != nil {
		e.log.Error("read stall recoveries", "err", err)
	}
	for range recovered {
		det.NoteRecovery()
	}
	if h, err := tracker.Hash(ctx); err == nil {
		det.SetBaseline(h)
	}
	// A run that yielded left its counts for this one.
	if y, ok := e.takeYield(ctx, r); ok {
		det.Restore(y.Stall)
		r.agentErrors = y.AgentErrors
		if r.fallback == 0 && y.Fallback <= len(e.opt.Fallbacks) {
			r.fallback = y.Fallback
		}
		start = start.Add(-y.Elapsed)
	}
	if e.opt.Limits.MaxDuration > 0 {
		r.deadline = start.Add(e.opt.Limits.MaxDuration)
	}
	ran := 0 // iterations this invocation ran
	for {
		if e.stateLost() {
			return e.finish(ctx, r, StateLost, lostDetail), nil
		}
		if ctx.Err() != nil {
			return e.finish(ctx, r, Interrupted, "interrupted; run `ralph resume` to continue"), nil
		}
		if end, detail := e.limitReached(r, start); end != "" {
			return e.finish(ctx, r, end, detail), nil
		}
		if reason, ok := e.stopRequested(ctx); ok {
			return e.finish(ctx, r, Stopped, "stopped on request: "+reason), nil
		}
		if e.opt.YieldAfter > 0 && ran >= e.opt.YieldAfter {
			return e.yield(ctx, r, det, e.now().Sub(start))
		}
		// An orchestration plan's walk: Human and Stop between steps.
		if end, detail := e.advance(ctx, r); end != "" {
			return e.finish(ctx, r, end, detail), nil
		}

		// Before the agent runs: nothing above ended the task.
		r.iteration++
		ran++
		r.tree.take() // a hash an earlier iteration read is not this one's
		it, err := e.iterate(ctx, r)
		if err != nil {
			return Outcome{}, err
		}
		switch {
		case it.signal != "" && e.stateLost():
			// No gate runs for a task whose state is gone: the loop's
			// top ends it.
			e.endIteration(ctx, r, it.turn.phase, outInterrupt, it.turn.res.Result, it.turn.calls)
			continue
		case it.signal != "":
			// Before the gates run: the agent says it is done.
			e.judge(ctx, r, &it)
		}
		if it.end != "" {
			return e.finish(ctx, r, it.end, it.detail), nil
		}
		if ctx.Err() != nil {
			continue
		}

		// Stall detection, on every iteration that ran to its end.
		obs := stall.Observation{Iteration: r.iteration, Calls: it.calls, Errors: it.errors, Idle: r.idle}
		r.idle = false
		if h, ok := r.tree.take(); ok {
			obs.TreeHash = h // what the iteration's snapshot recorded
		} else if h, err := tracker.Hash(ctx); err == nil {
			obs.TreeHash = h
		}
		if v := det.Observe(obs); v.Stalled() {
			end, detail := e.recoverStall(ctx, r, det, v)
			if end != "" {
				return e.finish(ctx, r, end, detail), nil
			}
			if h, err := tracker.Hash(ctx); err == nil {
				det.SetBaseline(h)
			}
		}
	}
}

// limitReached names the limit of Options.Limits the run has reached
// before another iteration, with its explanation; "" when none.
func (e *Engine) limitReached(r *run, start time.Time) (Reason, string) {
	lim := e.opt.Limits
	switch {
	case lim.MaxIterations > 0 && r.iteration >= lim.MaxIterations:
		return MaxIterations, fmt.Sprintf("reached the limit of %d iterations without passing the gates", lim.MaxIterations)
	case lim.MaxDuration > 0 && e.now().Sub(start) >= lim.MaxDuration:
		return MaxDuration, fmt.Sprintf("ran for the limit of %s", lim.MaxDuration)
	case lim.MaxCost > 0 && r.cost >= lim.MaxCost:
		return MaxCost, fmt.Sprintf("spent $%.2f, over the limit of $%.2f", r.cost, lim.MaxCost)
	}
	return "", ""
}

// yieldRecord is what a run that yielded keeps for the next: the counts
// that span iterations and are not in the store's iteration rows.
type yieldRecord struct {
	Stall       stall.State `json:"stall"`
	AgentErrors int         `json:"agent_errors,omitempty"`
	Fallback    int         `json:"fallback,omitempty"`
	// Elapsed is the loop time spent so far, which max-duration counts.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// yieldKey holds a task's yieldRecord between a yield and the resume.
func yieldKey(taskID int64) string { return fmt.Sprintf("task:%d:yield", taskID) }

// yield ends this invocation, not the task: it saves the counts for the
// next resume and returns Yielded. The task stays open, as an
// interrupted one does, but nothing was interrupted.
func (e *Engine) yield(ctx context.Context, r *run, det *stall.Detector, elapsed time.Duration) (Outcome, error) {
	b, err := json.Marshal(yieldRecord{Stall: det.State(), AgentErrors: r.agentErrors, Fallback: r.fallback, Elapsed: elapsed})
	if err != nil {
		return Outcome{}, err
	}
	if err := e.st.SetState(ctx, yieldKey(r.taskID), string(b)); err != nil {
		return Outcome{}, fmt.Errorf("task %d: keep its counts for the resume: %w", r.number, err)
	}
	detail := fmt.Sprintf("yielded after iteration %d; ralph resume goes on with iteration %d", r.iteration, r.iteration+1)
	e.harnessEvent(r, "yield", detail, "")
	return Outcome{Reason: Yielded, Detail: detail, Task: r.number, TaskID: r.taskID, Iterations: r.iteration, CostUSD: r.cost}, nil
}

// takeYield returns and forgets the counts a yield left for r's task.
func (e *Engine) takeYield(ctx context.Context, r *run) (yieldRecord, bool) {
	raw, ok, err := e.st.State(ctx, yieldKey(r.taskID))
	if err != nil || !ok {
		return yieldRecord{}, false
	}
	var y yieldRecord
	if err := json.Unmarshal([]byte(raw), &y); err != nil {
		e.log.Warn("read the counts the last run left", "task", r.number, "err", err)
		return yieldRecord{}, false
	}
	if err := e.st.DeleteState(ctx, yieldKey(r.taskID)); err != nil {
		e.log.Warn("forget the counts the last run left", "task", r.number, "err", err)
	}
	return y, true
}

// skipForTreeHash leaves out of the progress hash everything in .ralph/
// the harness itself writes each iteration.
func skipForTreeHash(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if part == "node_modules" || part == ".cache" {
			return true
		}
	}
	if rel == workspace.Dir || !strings.HasPrefix(rel, workspace.Dir+"/") {
		return false
	}
	name := strings.TrimPrefix(rel, workspace.Dir+"/")
	return name != workspace.Plan && name != workspace.Summary
}

// iterResult is what one iteration decided.
type iterResult struct {
	end    Reason
	detail string
	calls  []stall.Call
	errors []string
	// signal, when set, is the agent's completion signal: the iteration
	// is still open, for judge to run the gates on.
	signal string
	turn   *agentTurn
}

// iterate runs one iteration up to the end of its agent call: the
// iteration's start, its prompt, the agent. It records how the iteration
// ended, except when the agent signalled completion (it.signal): then the
// iteration is left for judge.
func (e *Engine) iterate(ctx context.Context, r *run) (iterResult, error) {
	phase, end, detail, err := e.startIteration(ctx, r)
	if err != nil || end != "" {
		return iterResult{end: end, detail: detail}, err
	}
	system, user, err := e.iterationPrompt(ctx, r)
	if err != nil {
		return iterResult{}, err
	}
	// The task's starting tree is on record before any agent runs.
	r.tree.settle()
	turn, err := e.callAgent(ctx, r, phase, system, user)
	if err != nil {
		return iterResult{}, err
	}
	if out, ended := e.callEnd(ctx, r, turn); ended {
		return out, nil
	}
	r.agentErrors = 0
	signal := e.completionSignal(turn.res.Result)
	if signal == "" {
		e.endIteration(ctx, r, phase, outContinue, turn.res.Result, turn.calls)
	}
	return iterResult{calls: turn.calls, errors: turn.errors, signal: signal, turn: turn}, nil
}

// startIteration numbers the iteration in iteration.txt and runs the PLAN
// phase check. A plan that just opened BUILD may start with a Human or a
// Stop that ends the task (end): then the iteration did not happen.
func (e *Engine) startIteration(ctx context.Context, r *run) (phase string, end Reason, detail string, err error) {
	if err := e.ws.SetInt(workspace.Iteration, r.iteration); err != nil {
		return "", "", "", err
	}
	pausepoint.At(pausepoint.IterationFile)
	e.report(r, Progress{Stage: StageIteration, Message: fmt.Sprintf("iteration %d", r.iteration)})
	e.planCheck(ctx, r)
	if end, detail := e.advance(ctx, r); end != "" {
		r.iteration--
		_ = e.ws.SetInt(workspace.Iteration, r.iteration)
		return "", end, detail, nil
	}
	// The store records the start right before the agent runs, with the
	// seal of the harness's files (iterationSink.Begin).
	return e.ws.Phase(), "", "", nil
}

// iterationPrompt builds the iteration's system and user prompts.
func (e *Engine) iterationPrompt(ctx context.Context, r *run) (system, user string, err error) {
	// The history guard marks the branch before the agent runs; its and
	// the files guard's notes go to feedback.md before the prompt reads it.
	e.guardHistoryBeforeAgent(ctx, r)
	e.writeGuardNotes(r)
	data := e.promptData(r.iteration, "")
	e.applyPlanPrompt(&data)
	if r.route == task.Mutation && data.Phase == workspace.PhasePlan {
		data.PlanUpdate = mutation.PromptAddition(r.number)
	}
	e.applyStepPrompt(&data, r)
	return e.prompts(data)
}

// completionSignal names the agent's completion signal, "" when it gave
// none: the status file, the promise at the end of the final message
// only, or an agent that finished without tools.
func (e *Engine) completionSignal(res agent.Result) string {
	switch {
	case e.ws.Status() == workspace.StatusComplete:
		return "status.txt says complete"
	case promised(res.Final, e.opt.Promise):
		return "the final message ends with the promise"
	case res.ToolCalls == 0:
		return "the agent finished without calling a tool"
	}
	return ""
}

// judge hands the completion signal of it to the completion handler,
// which runs the gates, and records how the iteration ended.
func (e *Engine) judge(ctx context.Context, r *run, it *iterResult) {
	e.dropSeal(ctx, r)
	outcome, end, detail, gateErrs := e.complete(ctx, r, it.signal)
	it.end, it.detail = end, detail
	it.errors = append(it.errors, gateErrs...)
	e.endIteration(ctx, r, it.turn.phase, outcome, it.turn.res.Result, it.turn.calls)
}

// promised reports whether final ends with the promise: the last
// non-blank text of the agent's final message, nothing after it.
func promised(final, promise string) bool {
	if promise == "" {
		return false
	}
	return strings.HasSuffix(strings.TrimSpace(final), promise)
}

func (e *Engine) endIteration(ctx context.Context, r *run, phase, outcome string, res agent.Result, calls []stall.Call) {
	wctx, cancel := detached(ctx)
	defer cancel()
	sig := stall.Signature(calls)
	// The tree after the iteration, for the dashboard's per-iteration
	// diff; a failure to record it costs only that.
	tree := ""
	if e.opt.Snapshots != nil {
		var err error
		if tree, err = e.opt.Snapshots.SaveIteration(wctx, r.number, r.iteration, e.treeChanges(wctx, r, false)); err != nil {
			e.log.Warn("record the iteration's tree", "err", err)
		}
		r.tree.recorded(tree)
	}
	err := e.st.EndIteration(wctx, store.Iteration{
		TaskID: r.taskID, Number: r.iteration, Phase: phase, Outcome: outcome,
		ToolCalls: res.ToolCalls, Signature: sig, Final: res.Final,
		CostUSD: res.Usage.CostUSD, InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
		Tree: tree,
	}, e.usedSeal(r)...)
	if err != nil {
		e.log.Error("record iteration", "err", err)
		e.dropSeal(wctx, r) // the iteration's end did not take it
	} else {
		r.sealUsed = false // deleted with the end
	}
	r.cost += res.Usage.CostUSD
}

// flushIterations waits until the iterations' chain holds every
// iteration recorded so far.
func (e *Engine) flushIterations() {
	if e.opt.Snapshots == nil {
		return
	}
	if err := e.opt.Snapshots.FlushIterations(); err != nil {
		e.log.Warn("record the task's iterations", "err", err)
	}
}

// agentEvent records and shows one agent event of an iteration in phase:
// the phase the iteration started in, not phase.txt, which the agent may
// have written since (the harness puts it back when the agent ends), and
// which is not read again for each event.
func (e *Engine) agentEvent(r *run, phase string, ev agent.Event, toolCalls int) {
	var data string
	switch {
	case len(ev.Input) > 0:
		data = string(ev.Input)
	case ev.Usage != nil:
		b, _ := json.Marshal(ev.Usage)
		data = string(b)
	case !ev.ResetAt.IsZero():
		data = fmt.Sprintf(`{"reset_at":%q}`, ev.ResetAt.Format(time.RFC3339))
	}
	text := ev.Text
	if ev.IsError {
		text = "error: " + text
	}
	source := store.SourceAgent
	if ev.Kind == agent.KindSandbox {
		// The harness saw the refusal in what a tool reported.
		source = store.SourceHarness
	}
	// Queued: the store commits the events that arrive while it commits
	// one in a single transaction (flushEvents).
	e.st.QueueEvent(store.Event{TaskID: r.taskID, Iteration: r.iteration, Source: source, Kind: string(ev.Kind), Tool: ev.Tool, Text: text, Data: data})
	e.report(r, Progress{Stage: StageAgent, Phase: phase, Event: &ev, ToolCalls: toolCalls})
	if ev.Kind == agent.KindToolCall {
		pausepoint.At(pausepoint.AgentEvent)
	}
}

// flushEvents waits until the agent's events queued so far are
// committed, so that what reads the store next (the guard, the gates, the
// iteration's end row, ralph log) sees all of them.
func (e *Engine) flushEvents() {
	if err := e.st.FlushEvents(); err != nil {
		e.log.Error("record event", "err", err)
	}
}

// harnessEvent records something the harness did or decided.
func (e *Engine) harnessEvent(r *run, kind, text, data string) {
	if _, err := e.st.AddEvent(context.Background(), store.Event{TaskID: r.taskID, Iteration: r.iteration, Source: store.SourceHarness, Kind: kind, Text: text, Data: data}); err != nil {
		e.log.Error("record event", "err", err)
	}
	if kind != "task" && kind != "end" { // those have reports of their own
		e.report(r, Progress{Stage: StageNote, Message: text})
	}
}

func (e *Engine) report(r *run, p Progress) {
	p.At = e.now()
	p.Task = r.number
	if p.Iteration == 0 {
		p.Iteration = r.iteration
	}
	if p.Phase == "" {
		p.Phase = e.ws.Phase()
	}
	if p.Step == "" {
		p.Step = r.step.label()
	}
	p.CostUSD = r.cost
	e.opt.Reporter.Report(p)
}

// finish records how the task ended and returns the outcome.
func (e *Engine) finish(ctx context.Context, r *run, reason Reason, detail string) Outcome {
	wctx, cancel := detached(ctx)
	defer cancel()
	e.guardHistory(wctx, r) // the last iteration may have ended before its check
	r.tree.settle()         // the starting tree's record, before the chain is flushed
	e.flushIterations()
	unverified := reason == Completed && e.unverified()
	if unverified {
		detail = UnverifiedDetail + " (" + detail + ")"
	}
	if s := e.tamperSummary(wctx, r); s != "" {
		detail += " — " + s
	}
	status := store.TaskDone
	if reason == Interrupted || reason == StateLost {
		// Both are continued by ralph resume, as their lines say.
		status = store.TaskInterrupted
	}
	if err := e.st.EndTask(wctx, r.taskID, status, string(reason), detail); err != nil {
		e.log.Error("record task end", "err", err)
	}
	e.dropSealFiles(wctx, r)
	e.closeStep(wctx, r, reason, detail)
	if reason == Stopped {
		_ = e.st.DeleteState(wctx, store.KeyStopRequest)
	}
	e.harnessEvent(r, "end", fmt.Sprintf("%s: %s", reason, detail), "")
	if e.stateLost() {
		// Whatever ended the run, a store deleted under it is put back.
		e.restoreState(wctx, r)
	}
	o := Outcome{Reason: reason, Detail: detail, Unverified: unverified, Task: r.number, TaskID: r.taskID, Iterations: r.iteration, CostUSD: r.cost}
	if t, err := e.st.GetTask(wctx, r.taskID); err == nil {
		o.CostUSD = t.CostUSD
		o.Elapsed = e.now().Sub(t.StartedAt)
	}
	o.Tampers, _ = e.st.CountEvents(wctx, r.taskID, store.KindTamper)
	e.report(r, Progress{Stage: StageEnd, Outcome: &o, Message: detail})
	return o
}

// planSections maps the plan's sections for stall recovery.
func planSections(root *plan.Node, taskN int) []stall.Section {
	var out []stall.Section
	for _, s := range plan.Sections(root) {
		sec := stall.Section{Name: s.Str("name"), Gumdrop: s.Str("gumdrop"), File: plan.SectionFile(s)}
		for _, m := range s.Markers {
			if m.Task == 0 || m.Task == taskN {
				sec.Marker = m.String()
			}
		}
		out = append(out, sec)
	}
	return out
}

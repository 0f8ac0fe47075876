package engine

// Orchestration plans (SPEC §7). When the plan's root is <Plan>, BUILD is
// not one loop but a walk over the plan's entries in document order — each
// <Step> of each <Phase>, and the <Human> and <Stop> markers between them:
//
//   - a Step runs as its own build loop: its text is the work, shown in the
//     user prompt as the current step with its phase and name; it is done
//     when a completion signal passes the gates. Then status.txt, summary.md
//     and feedback.md are reset for the next step. Iteration, cost and time
//     limits count for the whole task.
//   - a Human asks a person (see human.go) and blocks. Approve continues;
//     reject or timeout follows onReject: "stop" (the default) ends the run
//     as rejected, "skip" skips the next Step.
//   - a Stop records a stop request with its reason and ends the run as
//     stopped; a later `ralph resume --force` continues after it.
//
// Every phase and entry is a row of the store's steps table, keyed by its
// position, so a resumed run replays the walk, passes what is finished and
// continues at the step that was running (or waits again on the same
// request). The task completes when the walk reaches the end.
//
// Persona and Constraints: the plan's top-level ones apply to every agent
// call; a Step's apply to that step only. A Step's Persona replaces the
// plan's for the step (one identity at a time); a Step's Constraints are
// added after the plan's (the plan-wide rules still hold). Both go into
// the system prompt, never the user prompt.

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Iteration outcome of an iteration whose step passed its gates while
// more of the plan remains.
const outStepDone = "step-completed"

// stepCursor is the Step the build loop works on.
type stepCursor struct {
	idx    int // position in plan.Steps
	node   *plan.Node
	phase  string
	number int // 1-based among the plan's Steps
	count  int
}

// label names the step for progress lines and the iterations table.
func (c *stepCursor) label() string {
	if c == nil {
		return ""
	}
	name := c.node.Str("name")
	if c.phase != "" {
		return c.phase + " › " + name
	}
	return name
}

// orchestration returns the run's orchestration plan: parsed once per
// process when BUILD starts, nil when the plan is not a <Plan>.
func (e *Engine) orchestration(r *run) *plan.Node {
	if r.orch == nil {
		root, err := plan.Parse([]byte(e.ws.PlanContent()))
		if err != nil || root == nil || root.Component != "Plan" {
			return nil
		}
		r.orch = root
	}
	return r.orch
}

// walkEntry is one entry of the walk with what the store knows of it.
type walkEntry struct {
	idx      int
	ref      plan.StepRef
	phaseIdx int // position among the root's phases, -1 at the top level
	kind     string
}

func walkEntries(root *plan.Node) []walkEntry {
	phases := map[*plan.Node]int{}
	for _, c := range root.Children {
		if c.Component == "Phase" {
			phases[c] = len(phases)
		}
	}
	var out []walkEntry
	for i, ref := range plan.Steps(root) {
		w := walkEntry{idx: i, ref: ref, phaseIdx: -1, kind: strings.ToLower(ref.Node.Component)}
		if ref.Phase != nil {
			w.phaseIdx = phases[ref.Phase]
		}
		out = append(out, w)
	}
	return out
}

func (w walkEntry) phaseName() string { return w.ref.Phase.Str("name") }

func (w walkEntry) record(taskID int64) store.StepRecord {
	name := w.ref.Node.Str("name")
	switch w.kind {
	case store.StepKindHuman:
		name = w.ref.Node.Str("message")
	case store.StepKindStop:
		name = w.ref.Node.Str("reason")
	}
	return store.StepRecord{TaskID: taskID, Index: w.idx, Kind: w.kind, Phase: w.phaseName(), Name: name}
}

func (w walkEntry) phaseRecord(taskID int64) store.StepRecord {
	return store.StepRecord{TaskID: taskID, Index: w.phaseIdx, Kind: store.StepKindPhase, Phase: w.phaseName(), Name: w.phaseName()}
}

// finished reports whether the walk passes an entry's row: a step done or
// skipped, a human answered and acted on, a stop already honoured.
func finished(kind string, row store.StepRecord, ok bool) bool {
	if !ok {
		return false
	}
	switch kind {
	case store.StepKindStop:
		return true
	default:
		return row.Status == store.StepDone || row.Status == store.StepSkipped
	}
}

// advance walks an orchestration plan in BUILD up to the Step the loop
// works on next, blocking on Human requests and honouring Stops on the
// way. It does nothing for other plans or in PLAN. A non-empty reason
// ends the run; Completed means the walk reached the end.
func (e *Engine) advance(ctx context.Context, r *run) (Reason, string) {
	if e.ws.Phase() != workspace.PhaseBuild {
		return "", ""
	}
	root := e.orchestration(r)
	if root == nil {
		r.step = nil
		return "", ""
	}
	entries := walkEntries(root)
	count := 0
	for _, w := range entries {
		if w.kind == store.StepKindStep {
			count++
		}
	}
	number := 0
	var prev *walkEntry
	for i := range entries {
		w := &entries[i]
		if w.kind == store.StepKindStep {
			number++
		}
		if prev != nil && prev.phaseIdx >= 0 && prev.phaseIdx != w.phaseIdx {
			e.closePhase(ctx, r, *prev, store.StepDone, "")
		}
		prev = w
		row, ok, err := e.st.Step(ctx, r.taskID, w.kind, w.idx)
		if err != nil {
			return AgentError, err.Error()
		}
		if finished(w.kind, row, ok) {
			continue
		}
		e.openPhase(ctx, r, *w)
		switch w.kind {
		case store.StepKindStep:
			if err := e.st.StartStep(ctx, w.record(r.taskID)); err != nil {
				return AgentError, err.Error()
			}
			cur := &stepCursor{idx: w.idx, node: w.ref.Node, phase: w.phaseName(), number: number, count: count}
			if r.step == nil || r.step.idx != cur.idx {
				r.step = cur
				e.harnessEvent(r, "step", fmt.Sprintf("step %d of %d: %s", number, count, cur.label()), "")
			}
			return "", ""

		case store.StepKindHuman:
			if err := e.st.StartStep(ctx, w.record(r.taskID)); err != nil {
				return AgentError, err.Error()
			}
			req, end, detail := e.askHuman(ctx, r, w.idx, w.ref.Node, row)
			if end != "" {
				return end, detail
			}
			if !req.Rejected() {
				_ = e.st.EndStep(ctx, w.record(r.taskID), store.StepDone, "approved"+responseNote(req))
				e.harnessEvent(r, "human-approved", fmt.Sprintf("request %d approved%s", req.ID, responseNote(req)), "")
				continue
			}
			verdict := "rejected"
			if req.Status == store.HumanTimeout {
				verdict = "timed out"
			}
			if w.ref.Node.Str("onReject") == "skip" {
				next := nextStep(entries, i)
				what := "nothing left to skip"
				if next != nil {
					what = "skipped step " + next.ref.Node.Str("name")
					_ = e.st.EndStep(ctx, next.record(r.taskID), store.StepSkipped, fmt.Sprintf("request %d %s", req.ID, verdict))
				}
				_ = e.st.EndStep(ctx, w.record(r.taskID), store.StepDone, verdict+"; "+what)
				e.harnessEvent(r, "human-rejected", fmt.Sprintf("request %d %s%s; onReject=skip: %s", req.ID, verdict, responseNote(req), what), "")
				continue
			}
			detail = fmt.Sprintf("request %d %s%s: %s", req.ID, verdict, byNote(req), firstLine(req.Prompt))
			if req.Response != "" {
				detail += " (" + req.Response + ")"
			}
			_ = e.st.EndStep(ctx, w.record(r.taskID), store.StepRejected, detail)
			e.closePhase(ctx, r, *w, store.StepRejected, detail)
			return Rejected, detail

		case store.StepKindStop:
			reason := w.ref.Node.Str("reason")
			if reason == "" {
				reason = "the plan says stop here"
			}
			if err := e.st.SetState(ctx, store.KeyStopRequest, reason); err != nil {
				return AgentError, err.Error()
			}
			_ = e.st.EndStep(ctx, w.record(r.taskID), store.StepStopped, reason)
			e.closePhase(ctx, r, *w, store.StepStopped, reason)
			e.harnessEvent(r, "stop", "the plan's <Stop> was reached: "+reason, "")
			r.step = nil
			return Stopped, "stopped by the plan: " + reason
		}
	}
	if prev != nil && prev.phaseIdx >= 0 {
		e.closePhase(ctx, r, *prev, store.StepDone, "")
	}
	r.step = nil
	_ = e.ws.SetStatus(workspace.StatusComplete)
	e.snapshotPost(ctx, r)
	return Completed, fmt.Sprintf("every step of the plan is done (%d steps) after %d iterations", count, r.iteration)
}

func responseNote(req store.HumanRequest) string {
	by := byNote(req)
	if req.Response == "" {
		return by
	}
	return by + ": " + req.Response
}

// byNote names who answered req, for an answer from a notification
// channel (which knows the person): " by @ann (telegram)".
func byNote(req store.HumanRequest) string {
	if req.AnsweredBy == "" {
		return ""
	}
	return " by " + req.AnsweredBy + " (" + req.AnsweredVia + ")"
}

// nextStep returns the first Step after entry i, nil when there is none.
func nextStep(entries []walkEntry, i int) *walkEntry {
	for j := i + 1; j < len(entries); j++ {
		if entries[j].kind == store.StepKindStep {
			return &entries[j]
		}
	}
	return nil
}

// openPhase records that the walk is in w's phase.
func (e *Engine) openPhase(ctx context.Context, r *run, w walkEntry) {
	if w.phaseIdx < 0 {
		return
	}
	row, ok, err := e.st.Step(ctx, r.taskID, store.StepKindPhase, w.phaseIdx)
	if err != nil || (ok && row.Status == store.StepRunning) {
		return
	}
	if err := e.st.StartStep(ctx, w.phaseRecord(r.taskID)); err != nil {
		e.log.Error("record phase", "err", err)
		return
	}
	if !ok {
		e.harnessEvent(r, "phase", "phase "+w.phaseName(), "")
	}
}

// closePhase ends w's phase row when it is running.
func (e *Engine) closePhase(ctx context.Context, r *run, w walkEntry, status, detail string) {
	if w.phaseIdx < 0 {
		return
	}
	row, ok, err := e.st.Step(ctx, r.taskID, store.StepKindPhase, w.phaseIdx)
	if err != nil || !ok || row.Status != store.StepRunning {
		return
	}
	if err := e.st.EndStep(ctx, w.phaseRecord(r.taskID), status, detail); err != nil {
		e.log.Error("record phase", "err", err)
	}
}

// stepPassed is called by the completion handler when the gates pass. For
// an orchestrated step it records the step done and, when more of the
// plan remains, resets the step's files and reports true: the task goes
// on. It reports false for the last step and outside orchestration, and
// the task completes.
func (e *Engine) stepPassed(ctx context.Context, r *run) bool {
	cur := r.step
	if cur == nil || r.orch == nil {
		return false
	}
	entries := walkEntries(r.orch)
	if cur.idx >= len(entries) {
		return false
	}
	w := entries[cur.idx]
	summary, _ := e.ws.Read(workspace.Summary)
	_ = e.st.EndStep(ctx, w.record(r.taskID), store.StepDone, firstLine(summary))
	e.harnessEvent(r, "step-done", fmt.Sprintf("step %d of %d passed the gates: %s", cur.number, cur.count, cur.label()), "")
	r.gateFailures = 0
	if !e.moreToWalk(ctx, r, entries, cur.idx+1) {
		e.closePhase(ctx, r, w, store.StepDone, "")
		r.step = nil
		return false
	}
	_ = e.ws.Write(workspace.Summary, "")
	_ = e.ws.Write(workspace.Feedback, fmt.Sprintf("# Step done ✓\n\nStep %d of %d (%s) passed the quality gates. The harness has moved on: the current step is in the prompt. Work on it only; when it is done, write .ralph/summary.md (first line: a one-line summary) and write `complete` to .ralph/status.txt again.\n", cur.number, cur.count, cur.label()))
	_ = e.ws.SetStatus(workspace.StatusRunning)
	r.step = nil
	return true
}

// moreToWalk reports whether any entry from index from on is unfinished.
func (e *Engine) moreToWalk(ctx context.Context, r *run, entries []walkEntry, from int) bool {
	for _, w := range entries[min(from, len(entries)):] {
		row, ok, err := e.st.Step(ctx, r.taskID, w.kind, w.idx)
		if err != nil || !finished(w.kind, row, ok) {
			return true
		}
	}
	return false
}

// closeStep records how the running step ended when the run ends inside
// it: stopped, or failed by a limit. An interrupted step stays running,
// for resume.
func (e *Engine) closeStep(ctx context.Context, r *run, reason Reason, detail string) {
	cur := r.step
	if cur == nil || r.orch == nil || reason == Completed || reason == Interrupted {
		return
	}
	entries := walkEntries(r.orch)
	if cur.idx >= len(entries) {
		return
	}
	status := store.StepFailed
	if reason == Stopped {
		status = store.StepStopped
	}
	w := entries[cur.idx]
	_ = e.st.EndStep(ctx, w.record(r.taskID), status, detail)
	e.closePhase(ctx, r, w, status, detail)
}

// applyStepPrompt adds the current step to the prompt data: its phase,
// name and instructions for the user prompt, its Persona and Constraints
// for the system prompt (a step's Persona replaces the plan's; its
// Constraints come after the plan's).
func (e *Engine) applyStepPrompt(d *PromptData, r *run) {
	cur := r.step
	if cur == nil {
		return
	}
	d.Step = cur.node.Str("name")
	d.StepPhase = cur.phase
	d.StepNumber, d.StepCount = cur.number, cur.count
	d.StepInstructions = strings.TrimSpace(cur.node.Text)
	if p := plan.Persona(cur.node); p != "" {
		d.Persona = p
	}
	d.Constraints = append(d.Constraints, plan.Constraints(cur.node)...)
}

// promptMarkers matches <Persona> and <Constraints> elements in plan text.
var promptMarkers = regexp.MustCompile(`(?s)<(Persona|Constraints)\b[^>]*?/>|<(Persona|Constraints)\b[^>]*>.*?</(Persona|Constraints)\s*>`)

// planForUserPrompt is the plan as the user prompt shows it: Persona and
// Constraints elements go to the system prompt only, so they are replaced
// by a comment here.
func planForUserPrompt(text string) string {
	if !strings.Contains(text, "<Persona") && !strings.Contains(text, "<Constraints") {
		return text
	}
	return promptMarkers.ReplaceAllStringFunc(text, func(m string) string {
		name := "Persona"
		if strings.HasPrefix(m, "<Constraints") {
			name = "Constraints"
		}
		return "{/* " + name + ": in your system prompt */}"
	})
}

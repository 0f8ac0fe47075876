package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/mutation"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/proc"
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
	tracker := stall.NewTracker(e.ws.Root, skipForTreeHash, e.log)
	defer tracker.Close()
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
		if ctx.Err() != nil {
			return e.finish(ctx, r, Interrupted, "interrupted; run `ralph resume` to continue"), nil
		}
		lim := e.opt.Limits
		switch {
		case lim.MaxIterations > 0 && r.iteration >= lim.MaxIterations:
			return e.finish(ctx, r, MaxIterations, fmt.Sprintf("reached the limit of %d iterations without passing the gates", lim.MaxIterations)), nil
		case lim.MaxDuration > 0 && e.now().Sub(start) >= lim.MaxDuration:
			return e.finish(ctx, r, MaxDuration, fmt.Sprintf("ran for the limit of %s", lim.MaxDuration)), nil
		case lim.MaxCost > 0 && r.cost >= lim.MaxCost:
			return e.finish(ctx, r, MaxCost, fmt.Sprintf("spent $%.2f, over the limit of $%.2f", r.cost, lim.MaxCost)), nil
		}
		if reason, ok, _ := e.st.State(ctx, store.KeyStopRequest); ok {
			return e.finish(ctx, r, Stopped, "stopped on request: "+reason), nil
		}
		if e.opt.YieldAfter > 0 && ran >= e.opt.YieldAfter {
			return e.yield(ctx, r, det, e.now().Sub(start))
		}
		// An orchestration plan's walk: Human and Stop between steps.
		if end, detail := e.advance(ctx, r); end != "" {
			return e.finish(ctx, r, end, detail), nil
		}

		r.iteration++
		ran++
		it, err := e.iterate(ctx, r)
		if err != nil {
			return Outcome{}, err
		}
		if it.end != "" {
			return e.finish(ctx, r, it.end, it.detail), nil
		}
		if ctx.Err() != nil {
			continue
		}

		// Stall detection, on every iteration that ran to its end.
		obs := stall.Observation{Iteration: r.iteration, Calls: it.calls, Errors: it.errors}
		if h, err := tracker.Hash(ctx); err == nil {
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
	for _, part := range strings.Split(rel, "/") {
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
}

func (e *Engine) iterate(ctx context.Context, r *run) (iterResult, error) {
	if err := e.ws.SetInt(workspace.Iteration, r.iteration); err != nil {
		return iterResult{}, err
	}
	pausepoint.At(pausepoint.IterationFile)
	e.report(r, Progress{Stage: StageIteration, Message: fmt.Sprintf("iteration %d", r.iteration)})
	e.planCheck(ctx, r)
	// A plan that just opened BUILD may start with a Human or a Stop.
	if end, detail := e.advance(ctx, r); end != "" {
		r.iteration--
		_ = e.ws.SetInt(workspace.Iteration, r.iteration)
		return iterResult{end: end, detail: detail}, nil
	}
	phase := e.ws.Phase()
	if err := e.st.StartIteration(ctx, r.taskID, r.iteration, phase, r.step.label()); err != nil {
		return iterResult{}, err
	}

	e.markHistory(ctx, r)
	data := e.promptData(r.iteration, "")
	e.applyPlanPrompt(&data)
	if r.route == task.Mutation && data.Phase == workspace.PhasePlan {
		data.PlanUpdate = mutation.PromptAddition(r.number)
	}
	e.applyStepPrompt(&data, r)
	system, user, err := e.prompts(data)
	if err != nil {
		return iterResult{}, err
	}

	var calls []stall.Call
	var agentErrs []string
	var res agent.Result
	for {
		calls, agentErrs = calls[:0], agentErrs[:0]
		emit := func(ev agent.Event) {
			if ev.Kind == agent.KindToolCall {
				calls = append(calls, stall.Call{Name: ev.Tool, Input: ev.Input})
			}
			if ev.Kind == agent.KindError {
				agentErrs = append(agentErrs, ev.Text)
			}
			e.agentEvent(r, ev, len(calls))
		}
		// The iteration ends at its own timeout or when the run's time
		// is up (max-duration), whichever comes first.
		var deadline time.Time
		if t := e.opt.Limits.IterationTimeout; t > 0 {
			deadline = e.now().Add(t)
		}
		runOut := !r.deadline.IsZero() && (deadline.IsZero() || r.deadline.Before(deadline))
		if runOut {
			deadline = r.deadline
		}
		ictx, cancel := ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			ictx, cancel = context.WithDeadline(ctx, deadline)
		}
		res, err = e.agentOf(r).Run(ictx, agentRequest(e.ws.Root, system, user, r.iteration, e.opt.Limits.IdleTimeout), emit)
		timedOut := ictx.Err() != nil && ctx.Err() == nil
		cancel()
		e.reportEscapes(r)

		var rl *agent.RateLimitError
		if errors.As(err, &rl) && e.exhausted(rl) && r.fallback < len(e.opt.Fallbacks) {
			// The backend ran out: the next iteration runs on the next.
			from := e.agentOf(r).Name()
			r.fallback++
			r.rateWaits = 0
			e.endIteration(ctx, r, phase, outExhausted, res, calls)
			when := "with no time given"
			if !rl.ResetAt.IsZero() {
				when = "until " + rl.ResetAt.Format(time.RFC3339)
			}
			e.harnessEvent(r, "fallback", fmt.Sprintf("%s ran out (%s, %s); iteration %d runs on %s",
				from, rl.Message, when, r.iteration+1, e.agentOf(r).Name()), "")
			return iterResult{}, nil
		}
		if errors.As(err, &rl) {
			if end, detail := e.waitRateLimit(ctx, r, rl); end != "" {
				e.endIteration(ctx, r, phase, outInterrupt, res, calls)
				return iterResult{end: end, detail: detail}, nil
			}
			if err := e.st.StartIteration(ctx, r.taskID, r.iteration, phase, r.step.label()); err != nil {
				return iterResult{}, err
			}
			continue
		}
		r.rateWaits = 0
		if res.ToolCalls < len(calls) {
			res.ToolCalls = len(calls)
		}
		switch {
		case ctx.Err() != nil:
			e.endIteration(ctx, r, phase, outInterrupt, res, calls)
			return iterResult{end: Interrupted, detail: "interrupted; run `ralph resume` to continue"}, nil
		case errors.Is(err, agent.ErrNotFound):
			e.endIteration(ctx, r, phase, outAgentErr, res, calls)
			return iterResult{end: AgentError, detail: err.Error()}, nil
		case timedOut && runOut:
			e.endIteration(ctx, r, phase, outTimeout, res, calls)
			return iterResult{end: MaxDuration, detail: fmt.Sprintf("ran for the limit of %s (the agent was stopped in iteration %d)", e.opt.Limits.MaxDuration, r.iteration)}, nil
		case timedOut:
			e.endIteration(ctx, r, phase, outTimeout, res, calls)
			e.harnessEvent(r, "timeout", fmt.Sprintf("iteration %d hit the %s iteration timeout; the agent was stopped", r.iteration, e.opt.Limits.IterationTimeout), "")
			return iterResult{calls: toCalls(calls), errors: []string{"iteration timeout"}}, nil
		case errors.Is(err, proc.ErrIdle) || errors.Is(err, agent.ErrIdle):
			e.endIteration(ctx, r, phase, outIdle, res, calls)
			e.harnessEvent(r, "timeout", fmt.Sprintf("the agent printed nothing for %s and was stopped", e.opt.Limits.IdleTimeout), "")
			return iterResult{calls: toCalls(calls), errors: []string{"idle timeout"}}, nil
		case err != nil:
			r.agentErrors++
			e.endIteration(ctx, r, phase, outAgentErr, res, calls)
			e.harnessEvent(r, "agent-error", err.Error(), "")
			if r.agentErrors >= e.opt.Limits.AgentErrors {
				return iterResult{end: AgentError, detail: fmt.Sprintf("the agent failed %d times in a row: %v", r.agentErrors, err)}, nil
			}
			return iterResult{calls: toCalls(calls), errors: append(agentErrs, err.Error())}, nil
		}
		break
	}
	r.agentErrors = 0
	e.checkHistory(ctx, r)

	// Completion signals: the status file, the promise at the end of the
	// final message only, or an agent that finished without tools.
	signal := ""
	switch {
	case e.ws.Status() == workspace.StatusComplete:
		signal = "status.txt says complete"
	case promised(res.Final, e.opt.Promise):
		signal = "the final message ends with the promise"
	case res.ToolCalls == 0:
		signal = "the agent finished without calling a tool"
	}
	out := iterResult{calls: toCalls(calls), errors: agentErrs}
	outcome := outContinue
	if signal != "" {
		var gateErrs []string
		outcome, out.end, out.detail, gateErrs = e.complete(ctx, r, signal)
		out.errors = append(out.errors, gateErrs...)
	}
	e.endIteration(ctx, r, phase, outcome, res, calls)
	return out, nil
}

func toCalls(c []stall.Call) []stall.Call { return append([]stall.Call(nil), c...) }

func agentRequest(root, system, user string, n int, idle time.Duration) agent.Request {
	return agent.Request{Dir: root, System: system, Prompt: user, Iteration: n, IdleTimeout: idle}
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
	err := e.st.EndIteration(wctx, store.Iteration{
		TaskID: r.taskID, Number: r.iteration, Phase: phase, Outcome: outcome,
		ToolCalls: res.ToolCalls, Signature: sig, Final: res.Final,
		CostUSD: res.Usage.CostUSD, InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
	})
	if err != nil {
		e.log.Error("record iteration", "err", err)
	}
	r.cost += res.Usage.CostUSD
}

// agentOf returns the backend r runs on now.
func (e *Engine) agentOf(r *run) agent.Agent {
	if r.fallback > 0 && r.fallback <= len(e.opt.Fallbacks) {
		return e.opt.Fallbacks[r.fallback-1]
	}
	return e.opt.Agent
}

// exhausted reports whether rl means the backend ran out rather than
// being briefly limited: its limit lifts later than Limits.MaxWait, or it
// gives no time and says a quota or usage limit ran out.
func (e *Engine) exhausted(rl *agent.RateLimitError) bool {
	if rl.ResetAt.IsZero() {
		return agent.IsQuota(rl.Message)
	}
	return rl.ResetAt.Sub(e.now()) > e.opt.Limits.MaxWait
}

// waitRateLimit waits until the limit lifts, showing a countdown. A stop
// request, the run's time limit or Ctrl-C ends the wait, and the run, with
// the reason it returns.
func (e *Engine) waitRateLimit(ctx context.Context, r *run, rl *agent.RateLimitError) (Reason, string) {
	wait := e.opt.Limits.Backoff << min(r.rateWaits, 10)
	if !rl.ResetAt.IsZero() {
		wait = rl.ResetAt.Sub(e.now())
	}
	wait = max(wait, time.Second)
	wait = min(wait, e.opt.Limits.MaxWait)
	r.rateWaits++
	e.harnessEvent(r, "rate-limit", fmt.Sprintf("rate limited (%s); waiting %s before retrying iteration %d", rl.Message, wait.Round(time.Second), r.iteration), "")
	deadline := e.now().Add(wait)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		now := e.now()
		left := deadline.Sub(now)
		if left <= 0 {
			return "", ""
		}
		if !r.deadline.IsZero() && !now.Before(r.deadline) {
			return MaxDuration, fmt.Sprintf("ran for the limit of %s (waiting out a rate limit)", e.opt.Limits.MaxDuration)
		}
		if reason, ok, _ := e.st.State(ctx, store.KeyStopRequest); ok {
			return Stopped, "stopped on request while waiting out a rate limit: " + reason
		}
		e.report(r, Progress{Stage: StageWait, Message: fmt.Sprintf("rate limited; retrying in %s", left.Round(time.Second))})
		select {
		case <-ctx.Done():
			return Interrupted, "interrupted while waiting out a rate limit; run `ralph resume` to continue"
		case <-tick.C:
		}
	}
}

// agentEvent records and shows one agent event.
func (e *Engine) agentEvent(r *run, ev agent.Event, toolCalls int) {
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
	if _, err := e.st.AddEvent(context.Background(), store.Event{TaskID: r.taskID, Iteration: r.iteration, Kind: string(ev.Kind), Tool: ev.Tool, Text: text, Data: data}); err != nil {
		e.log.Error("record event", "err", err)
	}
	e.report(r, Progress{Stage: StageAgent, Event: &ev, ToolCalls: toolCalls})
	if ev.Kind == agent.KindToolCall {
		pausepoint.At(pausepoint.AgentEvent)
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
	detail += e.guardAtEnd(wctx, r)
	status := store.TaskDone
	if reason == Interrupted {
		status = store.TaskInterrupted
	}
	if err := e.st.EndTask(wctx, r.taskID, status, string(reason), detail); err != nil {
		e.log.Error("record task end", "err", err)
	}
	e.closeStep(wctx, r, reason, detail)
	if reason == Stopped {
		_ = e.st.DeleteState(wctx, store.KeyStopRequest)
	}
	e.harnessEvent(r, "end", fmt.Sprintf("%s: %s", reason, detail), "")
	o := Outcome{Reason: reason, Detail: detail, Task: r.number, TaskID: r.taskID, Iterations: r.iteration, CostUSD: r.cost}
	if t, err := e.st.GetTask(wctx, r.taskID); err == nil {
		o.CostUSD = t.CostUSD
		o.Elapsed = e.now().Sub(t.StartedAt)
	}
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

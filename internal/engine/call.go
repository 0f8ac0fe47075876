package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agentcall"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
)

// agentTurn is one iteration's agent call: how it ended and what the
// agent did in its last run.
type agentTurn struct {
	phase  string
	res    agentcall.Result
	calls  []stall.Call
	errors []string // the errors the agent reported as events
}

// callAgent makes the iteration's agent call (internal/agentcall): the
// iteration's own timeout or the run's max-duration, whichever comes
// first; the idle timeout; rate limits waited out with a countdown, which
// a stop request, the run's time limit or Ctrl-C ends; the next backend of
// the fallback chain when the one in use runs out.
func (e *Engine) callAgent(ctx context.Context, r *run, phase, system, user string) (*agentTurn, error) {
	turn := &agentTurn{phase: phase}
	lim := e.opt.Limits
	c := agentcall.Caller{
		Timeout:     lim.IterationTimeout,
		IdleTimeout: lim.IdleTimeout,
		Deadline:    r.deadline,
		MaxWait:     lim.MaxWait,
		Backoff:     lim.Backoff,
		Stop:        agentcall.StopFunc(e.stopRequested),
		Sink:        &iterationSink{e: e, r: r, turn: turn},
		Clock:       agentcall.NowClock(e.now),
	}
	chain := e.chain(r)
	res, err := c.Call(ctx, chain, agent.Request{Dir: e.ws.Root, System: system, Prompt: user, Iteration: r.iteration, Sandbox: e.opt.Sandbox})
	r.fallback = chain.Current
	if err == nil && r.beginErr != nil {
		err = r.beginErr
	}
	r.beginErr = nil
	if err != nil {
		return nil, err
	}
	res.ToolCalls = max(res.ToolCalls, len(turn.calls))
	turn.res = res
	return turn, nil
}

// chain is the backends r may run on, with the one in use now.
func (e *Engine) chain(r *run) *agentcall.Chain {
	agents := append([]agent.Agent{e.opt.Agent}, e.opt.Fallbacks...)
	return &agentcall.Chain{Agents: agents, Current: min(r.fallback, len(agents)-1)}
}

// stopRequested reports a pending stop request (ralph stop) and its reason.
func (e *Engine) stopRequested(ctx context.Context) (string, bool) {
	reason, ok, _ := e.st.State(ctx, store.KeyStopRequest)
	return reason, ok
}

// iterationSink records and shows what an iteration's agent call does.
type iterationSink struct {
	e    *Engine
	r    *run
	turn *agentTurn
}

// Begin records the iteration's start, again when the call runs the agent
// again after a rate-limit wait, with the seal of the harness's files as
// the agent finds them (guard.go) in the same transaction; the turn keeps
// only the last run's tool calls and errors.
//
// For an agent that is a program, the start is recorded while the call
// prepares it (its sandbox), and the program's start waits for the
// record (RecordProcGroups, begun): an agent that runs in ralph's
// process waits for it here.
func (s *iterationSink) Begin(ctx context.Context, a agentcall.Attempt) error {
	s.turn.calls, s.turn.errors = nil, nil
	s.r.sealUsed = false // the seal written now replaces the one used
	start := func() error {
		if beforeStartRecord != nil {
			beforeStartRecord()
		}
		err := s.e.st.StartIteration(ctx, s.r.taskID, s.r.iteration, s.turn.phase, s.r.step.label(), s.e.sealOwned(s.r)...)
		if err != nil {
			s.r.sealKept = nil // not written after all: the next seal writes them
		}
		return err
	}
	if _, ok := a.Agent.(programAgent); !ok {
		return start()
	}
	s.r.begun.start(start)
	return nil
}

// beforeStartRecord, when set, runs before an iteration's start is
// recorded (tests slow the record down with it).
var beforeStartRecord func()

// programAgent is an agent that runs as a program (cliagent's backends):
// nothing of it acts before its process starts.
type programAgent interface{ Program() string }

// begun is an iteration's start (Begin) being recorded while the agent's
// call prepares: every process the call starts waits for it.
type begun struct {
	mu  sync.Mutex
	cur *beginRecord // nil when none is being recorded, or once End took it
}

// beginRecord is one start being recorded: err is set before done closes.
type beginRecord struct {
	done chan struct{}
	err  error
}

// start records the start with fn, in the background.
func (b *begun) start(fn func() error) {
	rec := &beginRecord{done: make(chan struct{})}
	b.mu.Lock()
	b.cur = rec
	b.mu.Unlock()
	go func() {
		rec.err = fn()
		close(rec.done)
	}()
}

// wait waits for the start being recorded, if any, and returns its error
// (RecordProcGroups refuses to start a process then).
func (b *begun) wait() error {
	b.mu.Lock()
	rec := b.cur
	b.mu.Unlock()
	return rec.wait()
}

// finish waits for the start being recorded and forgets it, returning its
// error.
func (b *begun) finish() error {
	b.mu.Lock()
	rec := b.cur
	b.cur = nil
	b.mu.Unlock()
	return rec.wait()
}

// wait waits for rec, if there is one, and returns its error.
func (rec *beginRecord) wait() error {
	if rec == nil {
		return nil
	}
	<-rec.done
	return rec.err
}

func (s *iterationSink) Event(ev agent.Event) {
	switch ev.Kind {
	case agent.KindToolCall:
		s.turn.calls = append(s.turn.calls, stall.Call{Name: ev.Tool, Input: ev.Input})
	case agent.KindError:
		s.turn.errors = append(s.turn.errors, ev.Text)
	}
	s.e.agentEvent(s.r, s.turn.phase, ev, len(s.turn.calls))
}

// End commits the run's events, then undoes the agent's writes to the
// harness's files before anything reads them again, and before the gates
// run.
func (s *iterationSink) End(ctx context.Context, _ agentcall.Attempt, _ agent.Result, _ error) {
	if err := s.r.begun.finish(); err != nil && s.r.beginErr == nil {
		s.r.beginErr = err // the agent did not start: callAgent returns it
	}
	s.e.flushEvents()
	s.e.afterAgent(ctx, s.r)
	s.e.guardHistory(ctx, s.r)
	s.e.reportEscapes(s.r)
}

func (s *iterationSink) Waiting(rl *agent.RateLimitError, wait time.Duration) {
	s.e.harnessEvent(s.r, "rate-limit", fmt.Sprintf("rate limited (%s); waiting %s before retrying iteration %d", rl.Message, wait.Round(time.Second), s.r.iteration), "")
}

func (s *iterationSink) Countdown(left time.Duration) {
	s.e.report(s.r, Progress{Stage: StageWait, Message: fmt.Sprintf("rate limited; retrying in %s", left.Round(time.Second))})
}

// callEnd maps an agent call that did not finish to how the iteration
// ends; ended is false when the agent finished and its work is to be
// judged. Every ending but that one is recorded here.
func (e *Engine) callEnd(ctx context.Context, r *run, t *agentTurn) (out iterResult, ended bool) {
	lim := e.opt.Limits
	res := t.res
	end := func(outcome string, it iterResult) (iterResult, bool) {
		e.endIteration(ctx, r, t.phase, outcome, res.Result, t.calls)
		return it, true
	}
	switch res.Outcome {
	case agentcall.Finished:
		return iterResult{}, false
	case agentcall.FellBack:
		// The backend ran out: the next iteration runs on the next.
		out, ended = end(outExhausted, iterResult{})
		e.harnessEvent(r, "fallback", fmt.Sprintf("%s ran out (%s, %s); iteration %d runs on %s",
			e.backendName(r.fallback-1), res.Limit.Message, resetWhen(res.Limit), r.iteration+1, e.backendName(r.fallback)), "")
		return out, ended
	case agentcall.Stopped:
		return end(outInterrupt, iterResult{end: Stopped, detail: "stopped on request while waiting out a rate limit: " + res.StopReason})
	case agentcall.Interrupted:
		if res.Waiting {
			return end(outInterrupt, iterResult{end: Interrupted, detail: "interrupted while waiting out a rate limit; run `ralph resume` to continue"})
		}
		return end(outInterrupt, iterResult{end: Interrupted, detail: "interrupted; run `ralph resume` to continue"})
	case agentcall.TimeUp:
		if res.Waiting {
			return end(outInterrupt, iterResult{end: MaxDuration, detail: fmt.Sprintf("ran for the limit of %s (waiting out a rate limit)", lim.MaxDuration)})
		}
		return end(outTimeout, iterResult{end: MaxDuration, detail: fmt.Sprintf("ran for the limit of %s (the agent was stopped in iteration %d)", lim.MaxDuration, r.iteration)})
	case agentcall.NotFound:
		return end(outAgentErr, iterResult{end: AgentError, detail: res.Err.Error()})
	case agentcall.TimedOut:
		out, ended = end(outTimeout, iterResult{calls: t.calls, errors: []string{"iteration timeout"}})
		e.harnessEvent(r, "timeout", fmt.Sprintf("iteration %d hit the %s iteration timeout; the agent was stopped", r.iteration, lim.IterationTimeout), "")
		return out, ended
	case agentcall.Idle:
		out, ended = end(outIdle, iterResult{calls: t.calls, errors: []string{"idle timeout"}})
		e.harnessEvent(r, "timeout", fmt.Sprintf("the agent printed nothing for %s and was stopped", lim.IdleTimeout), "")
		return out, ended
	}
	// Failed: the agent's own error.
	r.agentErrors++
	out, ended = end(outAgentErr, iterResult{calls: t.calls, errors: append(t.errors, res.Err.Error())})
	e.harnessEvent(r, "agent-error", res.Err.Error(), "")
	if r.agentErrors >= lim.AgentErrors {
		out = iterResult{end: AgentError, detail: fmt.Sprintf("the agent failed %d times in a row: %v", r.agentErrors, res.Err)}
	}
	return out, ended
}

// backendName is the name of backend i of the fallback chain (0:
// Options.Agent).
func (e *Engine) backendName(i int) string {
	if i > 0 && i <= len(e.opt.Fallbacks) {
		return e.opt.Fallbacks[i-1].Name()
	}
	return e.opt.Agent.Name()
}

// resetWhen says when a limit lifts, for a message.
func resetWhen(rl *agent.RateLimitError) string {
	if rl.ResetAt.IsZero() {
		return "with no time given"
	}
	return "until " + rl.ResetAt.Format(time.RFC3339)
}

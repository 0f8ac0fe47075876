package spec

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agentcall"
	"github.com/ralph-harness/ralph/internal/store"
)

// ErrStopped means a stop request (ralph stop) ended the run.
var ErrStopped = errors.New("stopped on request")

// ErrTimeUp means the run's time (Options.Deadline) ran out.
var ErrTimeUp = errors.New("the run's time is up")

// call runs one agent call (internal/agentcall), the full output of each
// run going to the log logName. Rate limits are waited out and the call
// retried; they never count as a failure. A stop request or the run's
// deadline ends the wait, and the run. The returned error is the agent's
// (ErrAgentUnavailable wraps a missing program); an error that ends the
// run wraps ErrStopped or ErrTimeUp, and a context that ended is returned
// as is.
func (p *Pipeline) call(ctx context.Context, r *specRun, ag agent.Agent, role Role, attempt int, system, prompt, logName string) (agent.Result, error) {
	c := agentcall.Caller{
		Timeout:     p.opt.AgentTimeout,
		IdleTimeout: p.opt.IdleTimeout,
		Deadline:    p.opt.Deadline,
		MaxWait:     p.opt.MaxWait,
		Backoff:     time.Minute,
		Stop:        agentcall.StopFunc(p.stopRequested),
		Sink:        &callSink{p: p, r: r, role: role, path: filepath.Join(r.logs, logName), title: fmt.Sprintf("%s %s, attempt %d", role, r.s.Rel, attempt)},
		Clock:       agentcall.NowClock(p.opt.Now),
	}
	req := agent.Request{Dir: p.opt.Layout.Root, System: system, Prompt: prompt, Iteration: attempt, Sandbox: p.opt.Sandbox}
	res, err := c.Call(ctx, &agentcall.Chain{Agents: []agent.Agent{ag}}, req)
	if err != nil {
		return agent.Result{}, err
	}
	switch res.Outcome {
	case agentcall.Interrupted:
		return res.Result, ctx.Err()
	case agentcall.Stopped:
		return res.Result, fmt.Errorf("%w while waiting out a rate limit: %s", ErrStopped, res.StopReason)
	case agentcall.TimeUp:
		if res.Waiting {
			return res.Result, fmt.Errorf("%w (waiting out a rate limit)", ErrTimeUp)
		}
		return res.Result, fmt.Errorf("%w (the %s was stopped)", ErrTimeUp, role)
	case agentcall.NotFound:
		return res.Result, fmt.Errorf("%w: %s: %w", ErrAgentUnavailable, ag.Name(), res.Err)
	case agentcall.TimedOut:
		return res.Result, fmt.Errorf("no result within %s", p.opt.AgentTimeout)
	}
	return res.Result, res.Err
}

// stopRequested reports a pending stop request and its reason, when the
// Records keep them.
func (p *Pipeline) stopRequested(ctx context.Context) (string, bool) {
	sr, ok := p.opt.Records.(StopRequests)
	if !ok {
		return "", false
	}
	reason, ok, err := sr.State(ctx, store.KeyStopRequest)
	if err != nil {
		p.log.Warn("read the stop request", "err", err)
	}
	return reason, ok
}

// forgetStop drops a stop request left from before the run, or one the
// run has answered.
func (p *Pipeline) forgetStop(ctx context.Context) {
	sr, ok := p.opt.Records.(StopRequests)
	if !ok {
		return
	}
	if err := sr.DeleteState(context.WithoutCancel(ctx), store.KeyStopRequest); err != nil {
		p.log.Warn("forget the stop request", "err", err)
	}
}

// callSink writes each run of a call to its log and records it: the
// call's row, its event count while it runs (a Temporal worker's
// heartbeat reports it) and its cost.
type callSink struct {
	p     *Pipeline
	r     *specRun
	role  Role
	path  string
	title string

	// ctx is the call's, kept from Begin for the event counts Event
	// records.
	ctx    context.Context
	lg     *runLog
	callID int64
	events int
	saved  time.Time
}

func (s *callSink) Begin(ctx context.Context, a agentcall.Attempt) error {
	lg, err := openRunLog(s.path, s.title, a.Request)
	if err != nil {
		return err
	}
	s.ctx, s.lg, s.events, s.saved = ctx, lg, 0, time.Time{}
	s.callID = s.p.startCall(ctx, s.r, s.role, a.Request.Iteration)
	return nil
}

func (s *callSink) Event(e agent.Event) {
	s.lg.event(e)
	s.events++
	if time.Since(s.saved) >= time.Second {
		s.saved = time.Now()
		s.countEvents(s.ctx)
	}
}

// countEvents records the run's event count so far, when the Records
// count them.
func (s *callSink) countEvents(ctx context.Context) {
	er, ok := s.p.opt.Records.(EventRecords)
	if !ok || s.callID == 0 {
		return
	}
	if err := er.SetSpecCallEvents(ctx, s.callID, s.events); err != nil {
		s.p.log.Warn("record call events", "err", err)
	}
}

func (s *callSink) End(ctx context.Context, _ agentcall.Attempt, res agent.Result, err error) {
	s.countEvents(context.WithoutCancel(ctx))
	cost := res.Usage.CostUSD
	s.r.rec.CostUSD += cost
	if s.p.opt.OnCost != nil && cost != 0 {
		s.p.opt.OnCost(cost)
	}
	outcome := "agent finished"
	if err != nil {
		outcome = "agent error: " + err.Error()
	}
	s.p.endCall(ctx, s.callID, outcome, cost)
	if lerr := s.lg.close(res, outcome); lerr != nil {
		s.p.log.Warn("write run log", "err", lerr)
	}
}

func (s *callSink) Waiting(_ *agent.RateLimitError, wait time.Duration) {
	s.p.progress("  %s: rate limited; waiting %s", s.r.s.Rel, wait.Round(time.Second))
}

func (s *callSink) Countdown(time.Duration) {}

// startCall records the start of an agent call; 0 when the records keep
// no calls or the write failed (a missing call row never stops a run).
func (p *Pipeline) startCall(ctx context.Context, r *specRun, role Role, attempt int) int64 {
	cr, ok := p.opt.Records.(CallRecords)
	if !ok {
		return 0
	}
	id, err := cr.StartSpecCall(ctx, r.s.Rel, p.opt.Worktree, string(role), attempt)
	if err != nil {
		p.log.Warn("record call", "err", err)
		return 0
	}
	return id
}

func (p *Pipeline) endCall(ctx context.Context, id int64, outcome string, cost float64) {
	cr, ok := p.opt.Records.(CallRecords)
	if !ok || id == 0 {
		return
	}
	if err := cr.EndSpecCall(context.WithoutCancel(ctx), id, outcome, cost); err != nil {
		p.log.Warn("record call end", "err", err)
	}
}

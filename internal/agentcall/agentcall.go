// Package agentcall makes one agent call the way every part of ralph
// makes it: the engine's iterations and the spec pipeline's planner,
// implementer and verifier calls alike.
//
// A call runs the agent in use under its own deadline (the call's timeout
// or the run's overall deadline, whichever comes first) and its idle
// timeout. A rate or usage limit is waited out and the agent run again: the
// wait shows a countdown and ends early on a stop request (ralph stop), at
// the run's overall deadline or when the context ends. An agent that ran
// out — its limit lifts later than the longest wait allowed, or a quota is
// used up with no time given — hands over to the next agent of its Chain
// instead, and the call returns so the caller can say so. The usage of
// every run of the call is added up.
//
// What a call needs from its caller is three small interfaces: a Stop
// that says whether a stop was requested, a Sink that hears what the call
// does (each run's start and end, the agent's events, the wait), and a
// Clock.
package agentcall

import (
	"context"
	"errors"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
)

// Stop says whether a person asked the run to stop (ralph stop), and why.
type Stop interface {
	StopRequested(ctx context.Context) (reason string, ok bool)
}

// StopFunc is a Stop made of a function.
type StopFunc func(ctx context.Context) (reason string, ok bool)

// StopRequested calls f.
func (f StopFunc) StopRequested(ctx context.Context) (string, bool) { return f(ctx) }

// Clock tells the time and sleeps.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or returns ctx.Err() when ctx ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NowClock is a Clock that tells the time with its function (a caller's
// injected clock) and sleeps for real.
type NowClock func() time.Time

// Now calls f.
func (f NowClock) Now() time.Time { return f() }

// Sleep waits d or until ctx ends.
func (NowClock) Sleep(ctx context.Context, d time.Duration) error { return RealClock{}.Sleep(ctx, d) }

// Attempt is one run of an agent within a call.
type Attempt struct {
	// N counts the runs of this call from 1.
	N       int
	Agent   agent.Agent
	Request agent.Request
}

// Sink hears what a call does. Its methods are called from the calling
// goroutine, except Event, which is called as the agent's emit is.
type Sink interface {
	// Begin is told before each run of an agent; an error ends the call
	// with that error before the agent runs.
	Begin(ctx context.Context, a Attempt) error
	// Event receives every event of the agent, in order.
	Event(ev agent.Event)
	// End is told how each run ended: its own result and error.
	End(ctx context.Context, a Attempt, res agent.Result, err error)
	// Waiting is told when a wait for rl to lift starts, and how long it
	// is.
	Waiting(rl *agent.RateLimitError, wait time.Duration)
	// Countdown is told about once a second during a wait how long is
	// left.
	Countdown(left time.Duration)
}

// Chain is an agent and the ones to fall back on, in order, with the one
// in use. A call moves Current on when the agent in use runs out.
type Chain struct {
	Agents  []agent.Agent
	Current int
}

// Agent returns the agent in use.
func (c *Chain) Agent() agent.Agent { return c.Agents[c.Current] }

// hasNext reports whether there is an agent to fall back on.
func (c *Chain) hasNext() bool { return c.Current+1 < len(c.Agents) }

// Outcome says how a call ended.
type Outcome int

// Outcomes of a call.
const (
	// Finished: the agent ran to its end without an error.
	Finished Outcome = iota
	// Failed: the agent returned an error (Result.Err).
	Failed
	// NotFound: the agent's program is missing (Result.Err wraps
	// agent.ErrNotFound).
	NotFound
	// TimedOut: the call's own Timeout stopped the agent.
	TimedOut
	// Idle: the agent printed nothing for the idle timeout and was
	// stopped.
	Idle
	// TimeUp: the run's overall Deadline came, while the agent ran or
	// during a rate-limit wait (Result.Waiting).
	TimeUp
	// Stopped: a stop request ended a rate-limit wait (Result.StopReason).
	Stopped
	// Interrupted: the context ended, while the agent ran or during a
	// rate-limit wait (Result.Waiting).
	Interrupted
	// FellBack: the agent in use ran out (Result.Limit); the chain moved
	// on to the next agent, which has not run yet.
	FellBack
)

var outcomeNames = [...]string{"finished", "failed", "not-found", "timed-out", "idle", "time-up", "stopped", "interrupted", "fell-back"}

// String names the outcome.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Result is how a call ended.
type Result struct {
	Outcome Outcome
	// Result is the last run's result, with Usage the sum over every run
	// of the call.
	agent.Result
	// Err is the agent's error of the last run, nil when it had none.
	Err error
	// Limit is the rate limit the call last met: for FellBack the one
	// that ran the agent out, for Stopped, TimeUp and Interrupted in a
	// wait the one waited on.
	Limit *agent.RateLimitError
	// Waiting is set when the call ended during a rate-limit wait.
	Waiting bool
	// StopReason is the stop request's reason for Stopped.
	StopReason string
	// Attempts counts the runs of the call.
	Attempts int
}

// Caller makes agent calls under one policy.
type Caller struct {
	// Timeout bounds each run of an agent; zero means none.
	Timeout time.Duration
	// IdleTimeout is passed to the agent: it is stopped when it prints
	// nothing for this long. Zero means none.
	IdleTimeout time.Duration
	// Deadline is when the whole run's time is up (ralph run --timeout);
	// a run of the agent and a rate-limit wait both end there. Zero means
	// no limit.
	Deadline time.Time
	// MaxWait caps one rate-limit wait; a limit that lifts later than
	// this ran the agent out (fall back when the chain has another).
	// Zero means 6 hours.
	MaxWait time.Duration
	// Backoff is the first wait after a rate limit that gives no time;
	// each further wait of the same call doubles it. Zero means 30
	// seconds.
	Backoff time.Duration
	// Stop is asked during rate-limit waits; nil never stops.
	Stop Stop
	// Sink hears what the call does; nil hears nothing.
	Sink Sink
	// Clock is the time; nil means RealClock.
	Clock Clock
}

// Call runs chain's agent in use with req until it finishes, fails,
// runs out or the call's time ends, waiting out rate limits in between
// (see the package documentation). req.IdleTimeout is set from the
// Caller. The returned error is the Sink's, from Begin; everything about
// the agent is in the Result.
func (c *Caller) Call(ctx context.Context, chain *Chain, req agent.Request) (Result, error) {
	clock := c.clock()
	req.IdleTimeout = c.IdleTimeout
	var out Result
	var total agent.Usage
	for waits := 0; ; waits++ {
		out.Attempts++
		a := Attempt{N: out.Attempts, Agent: chain.Agent(), Request: req}
		if c.Sink != nil {
			if err := c.Sink.Begin(ctx, a); err != nil {
				return out, err
			}
		}
		ran := c.run(ctx, a)
		total = total.Add(ran.res.Usage)
		out.Result, out.Err = ran.res, ran.err
		out.Usage = total

		var rl *agent.RateLimitError
		if ctx.Err() != nil || !errors.As(ran.err, &rl) {
			out.Outcome = ran.outcome(ctx)
			return out, nil
		}
		out.Limit = rl
		if c.exhausted(rl, clock.Now()) && chain.hasNext() {
			chain.Current++
			out.Outcome = FellBack
			return out, nil
		}
		if end, reason := c.wait(ctx, rl, waits); end != Finished {
			out.Outcome, out.Waiting, out.StopReason = end, true, reason
			return out, nil
		}
	}
}

// ran is how one run of an agent ended.
type ran struct {
	res agent.Result
	err error
	// timedOut: the run's deadline stopped the agent; timeUp: that
	// deadline was the run's overall one.
	timedOut, timeUp bool
}

// run runs a's agent once under the call's deadline.
func (c *Caller) run(ctx context.Context, a Attempt) ran {
	now := c.clock().Now()
	var deadline time.Time
	if c.Timeout > 0 {
		deadline = now.Add(c.Timeout)
	}
	timeUp := !c.Deadline.IsZero() && (deadline.IsZero() || c.Deadline.Before(deadline))
	if timeUp {
		deadline = c.Deadline
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		rctx, cancel = context.WithTimeout(ctx, deadline.Sub(now))
	}
	emit := func(agent.Event) {}
	if c.Sink != nil {
		emit = c.Sink.Event
	}
	res, err := a.Agent.Run(rctx, a.Request, emit)
	timedOut := rctx.Err() != nil && ctx.Err() == nil
	cancel()
	if c.Sink != nil {
		c.Sink.End(ctx, a, res, err)
	}
	return ran{res: res, err: err, timedOut: timedOut, timeUp: timeUp}
}

// outcome says how a run that met no rate limit ended the call.
func (r ran) outcome(ctx context.Context) Outcome {
	switch {
	case ctx.Err() != nil:
		return Interrupted
	case errors.Is(r.err, agent.ErrNotFound):
		return NotFound
	case r.timedOut && r.timeUp:
		return TimeUp
	case r.timedOut:
		return TimedOut
	case errors.Is(r.err, proc.ErrIdle) || errors.Is(r.err, agent.ErrIdle):
		return Idle
	case r.err != nil:
		return Failed
	}
	return Finished
}

// exhausted reports whether rl means the agent ran out rather than being
// briefly limited: its limit lifts later than MaxWait, or it gives no time
// and says a quota or usage limit ran out.
func (c *Caller) exhausted(rl *agent.RateLimitError, now time.Time) bool {
	if rl.ResetAt.IsZero() {
		return agent.IsQuota(rl.Message)
	}
	return rl.ResetAt.Sub(now) > c.maxWait()
}

// wait waits until rl lifts: until its ResetAt, or Backoff doubled for
// each earlier wait of the call when it gives no time; at least a second,
// at most MaxWait. It returns Finished when the wait is over, or the
// outcome that ended it early (with a stop request's reason).
func (c *Caller) wait(ctx context.Context, rl *agent.RateLimitError, waits int) (Outcome, string) {
	clock := c.clock()
	backoff := c.Backoff
	if backoff <= 0 {
		backoff = 30 * time.Second
	}
	wait := backoff << min(waits, 10)
	if !rl.ResetAt.IsZero() {
		wait = rl.ResetAt.Sub(clock.Now())
	}
	wait = min(max(wait, time.Second), c.maxWait())
	if c.Sink != nil {
		c.Sink.Waiting(rl, wait)
	}
	end := clock.Now().Add(wait)
	for {
		now := clock.Now()
		left := end.Sub(now)
		if left <= 0 {
			return Finished, ""
		}
		if !c.Deadline.IsZero() && !now.Before(c.Deadline) {
			return TimeUp, ""
		}
		if c.Stop != nil {
			if reason, ok := c.Stop.StopRequested(ctx); ok {
				return Stopped, reason
			}
		}
		if c.Sink != nil {
			c.Sink.Countdown(left)
		}
		if err := clock.Sleep(ctx, min(time.Second, left)); err != nil {
			return Interrupted, ""
		}
	}
}

func (c *Caller) maxWait() time.Duration {
	if c.MaxWait <= 0 {
		return 6 * time.Hour
	}
	return c.MaxWait
}

func (c *Caller) clock() Clock {
	if c.Clock == nil {
		return RealClock{}
	}
	return c.Clock
}

package agentcall

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
)

// fakeClock moves only when something sleeps on it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// script is an agent that plays one step per run; the last step repeats.
type script struct {
	name  string
	steps []func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error)
	runs  int
	reqs  []agent.Request
}

func (s *script) Name() string { return s.name }

func (s *script) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	s.reqs = append(s.reqs, req)
	step := s.steps[min(s.runs, len(s.steps)-1)]
	s.runs++
	return step(ctx, req, emit)
}

type step = func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error)

func finish(cost float64) step {
	return func(_ context.Context, _ agent.Request, emit func(agent.Event)) (agent.Result, error) {
		emit(agent.Event{Kind: agent.KindText, Text: "done"})
		return agent.Result{Final: "done", Usage: agent.Usage{CostUSD: cost}}, nil
	}
}

func fail(err error, cost float64) step {
	return func(context.Context, agent.Request, func(agent.Event)) (agent.Result, error) {
		return agent.Result{Usage: agent.Usage{CostUSD: cost}}, err
	}
}

// limited is a rate limit that lifts after d on clock (no time when d is 0).
func limited(clock Clock, d time.Duration, msg string) step {
	return func(context.Context, agent.Request, func(agent.Event)) (agent.Result, error) {
		rl := &agent.RateLimitError{Message: msg}
		if d > 0 {
			rl.ResetAt = clock.Now().Add(d)
		}
		return agent.Result{}, rl
	}
}

// hang runs until its context ends.
func hang(ctx context.Context, _ agent.Request, _ func(agent.Event)) (agent.Result, error) {
	<-ctx.Done()
	return agent.Result{}, ctx.Err()
}

// idle stops itself as a backend does when the agent prints nothing for
// req.IdleTimeout.
func idle(ctx context.Context, req agent.Request, _ func(agent.Event)) (agent.Result, error) {
	if req.IdleTimeout <= 0 {
		return agent.Result{}, errors.New("no idle timeout was passed")
	}
	select {
	case <-time.After(req.IdleTimeout):
		return agent.Result{}, fmt.Errorf("fake: %w", agent.ErrIdle)
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
}

// recorder is a Sink that writes down what it hears.
type recorder struct {
	mu      sync.Mutex
	begins  []string
	ends    []float64
	events  int
	waits   []time.Duration
	counted int
}

func (r *recorder) Begin(_ context.Context, a Attempt) error {
	r.begins = append(r.begins, fmt.Sprintf("%d:%s", a.N, a.Agent.Name()))
	return nil
}
func (r *recorder) Event(agent.Event) { r.mu.Lock(); r.events++; r.mu.Unlock() }
func (r *recorder) End(_ context.Context, _ Attempt, res agent.Result, _ error) {
	r.ends = append(r.ends, res.Usage.CostUSD)
}
func (r *recorder) Waiting(_ *agent.RateLimitError, wait time.Duration) {
	r.waits = append(r.waits, wait)
}
func (r *recorder) Countdown(time.Duration) { r.counted++ }

func TestCall(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		// setup returns the chain and the caller, given the test's clock.
		setup func(clock *fakeClock) ([]agent.Agent, Caller)
		want  Outcome
		// check looks at the rest.
		check func(t *testing.T, res Result, chain *Chain, rec *recorder, waited time.Duration)
	}{
		{
			name: "an agent that runs past the call's timeout is stopped",
			setup: func(*fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{hang}}}, Caller{Timeout: 50 * time.Millisecond}
			},
			want: TimedOut,
		},
		{
			name: "the run's deadline stops the agent before the call's timeout",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{hang}}},
					Caller{Timeout: time.Hour, Deadline: clock.Now().Add(50 * time.Millisecond)}
			},
			want: TimeUp,
			check: func(t *testing.T, res Result, _ *Chain, _ *recorder, _ time.Duration) {
				if res.Waiting {
					t.Error("the time ran out while the agent ran, not in a wait")
				}
			},
		},
		{
			name: "an agent silent for the idle timeout is stopped",
			setup: func(*fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{idle}}}, Caller{IdleTimeout: 20 * time.Millisecond}
			},
			want: Idle,
			check: func(t *testing.T, res Result, chain *Chain, _ *recorder, _ time.Duration) {
				if got := chain.Agents[0].(*script).reqs[0].IdleTimeout; got != 20*time.Millisecond {
					t.Errorf("the agent was asked for an idle timeout of %s, want 20ms", got)
				}
			},
		},
		{
			name: "a brief rate limit is waited out and the agent runs again",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{limited(clock, 30*time.Second, "429 Too Many Requests"), finish(0)}}},
					Caller{MaxWait: time.Hour}
			},
			want: Finished,
			check: func(t *testing.T, res Result, _ *Chain, rec *recorder, waited time.Duration) {
				if res.Attempts != 2 || waited != 30*time.Second || len(rec.waits) != 1 || rec.waits[0] != 30*time.Second || rec.counted != 30 {
					t.Errorf("ran %d times, waited %s (sink heard %v, %d countdowns); want 2, 30s, [30s], 30", res.Attempts, waited, rec.waits, rec.counted)
				}
			},
		},
		{
			name: "a limit with no time backs off, doubling",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				l := limited(clock, 0, "overloaded")
				return []agent.Agent{&script{name: "a", steps: []step{l, l, l, finish(0)}}}, Caller{Backoff: 10 * time.Second}
			},
			want: Finished,
			check: func(t *testing.T, res Result, _ *Chain, rec *recorder, waited time.Duration) {
				if fmt.Sprint(rec.waits) != "[10s 20s 40s]" || waited != 70*time.Second {
					t.Errorf("waited %v (%s in all), want [10s 20s 40s]", rec.waits, waited)
				}
			},
		},
		{
			name: "a stop request ends a rate-limit wait",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				stopAt := clock.Now().Add(5 * time.Second)
				return []agent.Agent{&script{name: "a", steps: []step{limited(clock, 10*time.Minute, "retry after 600 seconds"), finish(0)}}},
					Caller{MaxWait: time.Hour, Stop: StopFunc(func(context.Context) (string, bool) {
						return "not today", !clock.Now().Before(stopAt)
					})}
			},
			want: Stopped,
			check: func(t *testing.T, res Result, chain *Chain, _ *recorder, waited time.Duration) {
				if !res.Waiting || res.StopReason != "not today" || waited != 5*time.Second || chain.Agents[0].(*script).runs != 1 {
					t.Errorf("waiting %v, reason %q, after %s, %d runs; want a stop after 5s with its reason and no second run",
						res.Waiting, res.StopReason, waited, chain.Agents[0].(*script).runs)
				}
			},
		},
		{
			name: "the run's deadline cuts a rate-limit wait short",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{limited(clock, 10*time.Minute, "retry after 600 seconds"), finish(0)}}},
					Caller{MaxWait: time.Hour, Deadline: clock.Now().Add(90 * time.Second)}
			},
			want: TimeUp,
			check: func(t *testing.T, res Result, _ *Chain, _ *recorder, waited time.Duration) {
				if !res.Waiting || waited != 90*time.Second || res.Limit == nil {
					t.Errorf("waiting %v after %s, limit %v; want the wait ended at the 90s deadline", res.Waiting, waited, res.Limit)
				}
			},
		},
		{
			name: "a wait never runs past MaxWait",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{limited(clock, 3*time.Hour, "429 retry later"), finish(0)}}},
					Caller{MaxWait: 2 * time.Hour}
			},
			want: Finished,
			check: func(t *testing.T, _ Result, _ *Chain, _ *recorder, waited time.Duration) {
				if waited != 2*time.Hour {
					t.Errorf("waited %s, want the 2h cap", waited)
				}
			},
		},
		{
			name: "an agent that ran out falls back to the next of the chain",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{
					&script{name: "claude", steps: []step{limited(clock, 5*time.Hour, "usage limit reached")}},
					&script{name: "codex", steps: []step{finish(0)}},
				}, Caller{MaxWait: time.Hour}
			},
			want: FellBack,
			check: func(t *testing.T, res Result, chain *Chain, _ *recorder, waited time.Duration) {
				if chain.Current != 1 || chain.Agent().Name() != "codex" || res.Limit == nil || waited != 0 {
					t.Errorf("chain at %d (%s), limit %v, waited %s; want codex next, no wait", chain.Current, chain.Agent().Name(), res.Limit, waited)
				}
			},
		},
		{
			name: "a used-up quota with no time falls back",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{
					&script{name: "claude", steps: []step{fail(&agent.RateLimitError{Message: "You exceeded your current quota"}, 0)}},
					&script{name: "codex", steps: []step{finish(0)}},
				}, Caller{}
			},
			want: FellBack,
		},
		{
			name: "the last agent of a chain waits instead of falling back",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "claude", steps: []step{limited(clock, 5*time.Hour, "usage limit reached"), finish(0)}}},
					Caller{MaxWait: time.Hour}
			},
			want: Finished,
		},
		{
			name: "an ordinary agent error never falls back",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{
					&script{name: "claude", steps: []step{fail(errors.New("the model exploded"), 0)}},
					&script{name: "codex", steps: []step{finish(0)}},
				}, Caller{}
			},
			want: Failed,
			check: func(t *testing.T, res Result, chain *Chain, _ *recorder, _ time.Duration) {
				if chain.Current != 0 || res.Err == nil {
					t.Errorf("chain at %d, err %v; want claude still in use and its error", chain.Current, res.Err)
				}
			},
		},
		{
			name: "a missing program is not found",
			setup: func(*fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{fail(fmt.Errorf("claude: %w", agent.ErrNotFound), 0)}}}, Caller{}
			},
			want: NotFound,
		},
		{
			name: "the cost of every run is added up",
			setup: func(clock *fakeClock) ([]agent.Agent, Caller) {
				return []agent.Agent{&script{name: "a", steps: []step{
					func(context.Context, agent.Request, func(agent.Event)) (agent.Result, error) {
						return agent.Result{Usage: agent.Usage{CostUSD: 0.10, InputTokens: 5}}, &agent.RateLimitError{Message: "429", ResetAt: clock.Now().Add(time.Second)}
					},
					finish(0.25),
				}}}, Caller{}
			},
			want: Finished,
			check: func(t *testing.T, res Result, _ *Chain, rec *recorder, _ time.Duration) {
				if res.Usage.CostUSD != 0.35 || res.Usage.InputTokens != 5 || fmt.Sprint(rec.ends) != "[0.1 0.25]" {
					t.Errorf("cost %v (%d input tokens), runs cost %v; want 0.35 in all from 0.1 and 0.25", res.Usage.CostUSD, res.Usage.InputTokens, rec.ends)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: start}
			agents, c := tc.setup(clock)
			rec := &recorder{}
			c.Clock, c.Sink = clock, rec
			chain := &Chain{Agents: agents}
			res, err := c.Call(context.Background(), chain, agent.Request{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.want {
				t.Fatalf("outcome %s (err %v), want %s", res.Outcome, res.Err, tc.want)
			}
			if len(rec.begins) != res.Attempts || len(rec.ends) != res.Attempts {
				t.Errorf("sink heard %d begins and %d ends for %d runs", len(rec.begins), len(rec.ends), res.Attempts)
			}
			if tc.check != nil {
				tc.check(t, res, chain, rec, clock.Now().Sub(start))
			}
		})
	}
}

// A cancelled context ends a wait at once, as interrupted.
func TestCallInterruptedInWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &script{name: "a", steps: []step{func(context.Context, agent.Request, func(agent.Event)) (agent.Result, error) {
		cancel() // Ctrl-C arrives as the limit is reported
		return agent.Result{}, &agent.RateLimitError{Message: "429"}
	}}}
	c := Caller{Clock: &fakeClock{now: time.Now()}}
	res, err := c.Call(ctx, &Chain{Agents: []agent.Agent{a}}, agent.Request{})
	if err != nil || res.Outcome != Interrupted || a.runs != 1 {
		t.Fatalf("outcome %s, err %v, %d runs; want interrupted after one run", res.Outcome, err, a.runs)
	}
}

// A Sink's error from Begin ends the call before the agent runs.
func TestCallBeginError(t *testing.T) {
	a := &script{name: "a", steps: []step{finish(0)}}
	boom := errors.New("store closed")
	c := Caller{Sink: beginErr{boom}}
	if _, err := c.Call(context.Background(), &Chain{Agents: []agent.Agent{a}}, agent.Request{}); !errors.Is(err, boom) || a.runs != 0 {
		t.Fatalf("err %v after %d runs, want %v before any", err, a.runs, boom)
	}
}

type beginErr struct{ err error }

func (b beginErr) Begin(context.Context, Attempt) error            { return b.err }
func (beginErr) Event(agent.Event)                                 {}
func (beginErr) End(context.Context, Attempt, agent.Result, error) {}
func (beginErr) Waiting(*agent.RateLimitError, time.Duration)      {}
func (beginErr) Countdown(time.Duration)                           {}

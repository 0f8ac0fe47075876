package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agentcall"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/sandbox"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
)

// Snapshots is what the pipeline needs of internal/snapshot: a save
// before each planner attempt, the files changed since, and a rollback
// when the planner went out of bounds.
type Snapshots interface {
	Save(ctx context.Context, name, message string) (snapshot.Snapshot, error)
	Diff(ctx context.Context, name string) ([]snapshot.FileChange, error)
	Rollback(ctx context.Context, name string) (snapshot.Snapshot, error)
}

var _ Snapshots = (*snapshot.Repo)(nil)

// Records is what the pipeline needs of the store: one record per spec.
type Records interface {
	Spec(ctx context.Context, id string) (store.SpecRecord, bool, error)
	PutSpec(ctx context.Context, r store.SpecRecord) error
}

var _ Records = (*store.Store)(nil)

// Record states, as the store mirrors them.
const (
	StateNew          = "new"
	StatePlanning     = "planning"
	StatePlanned      = "planned"
	StateImplementing = "implementing"
	StateWaiting      = "waiting" // on a <Human> of the plan
	StateCandidate    = "candidate"
	StateVerifying    = "verifying"
	StateInvalidated  = "invalidated"
	StateDone         = "done"
	StateFailed       = "failed"
)

// Options configure a Pipeline.
type Options struct {
	Layout Layout
	// Planner, Implementer and Verifier are the three roles' agents; they
	// may be the same agent. Each call is a fresh Run whose Iteration is
	// the role's attempt number for the spec.
	Planner, Implementer, Verifier agent.Agent
	// Gates run after an implementation, before a candidate is recorded.
	Gates []gate.Gate
	// Snapshots guard the planner's read-only rule. Required.
	Snapshots Snapshots
	// Records mirrors spec state into the store; nil keeps none (the
	// counters then restart with every run).
	Records Records
	Phrases Phrases
	// MaxAttempts is how many failed attempts (planner, implementer,
	// gates or verifier) a spec may have in one run; default 3.
	MaxAttempts int
	// Backoff is the wait before the first retry, doubled for each
	// further one (capped at 5 minutes); zero retries at once.
	Backoff time.Duration
	// AgentTimeout and IdleTimeout bound one agent call; zero means none.
	AgentTimeout, IdleTimeout time.Duration
	// Sandbox confines the agents' processes; nil runs them unconfined.
	Sandbox *sandbox.Settings
	// Deadline is when the whole run's time is up: an agent call or a
	// wait for a rate limit to lift that reaches it ends the run with an
	// error that wraps ErrTimeUp. Zero means no limit.
	Deadline time.Time
	// MaxWait caps one wait for a rate limit to lift; default 1 hour.
	MaxWait time.Duration
	// Humans, when set, lets a <Human> in the plan ask a person (see
	// human.go); nil passes over them.
	Humans Humans
	// LogDir holds runs/<spec_id>/<timestamp>/.
	LogDir string
	// Force runs specs that are done again.
	Force bool
	// Progress receives one plain line per step; nil discards them.
	Progress io.Writer
	Logger   *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Worktree is recorded with every agent call when Records also keeps
	// calls (CallRecords): the git worktree the specs run in, "" for the
	// workspace itself.
	Worktree string
	// OnCost receives the cost of every agent call; nil ignores it. A
	// parallel run sums it for its whole-run budget.
	OnCost func(usd float64)
	// Budget, when set, is asked before every step (plan, implement,
	// verify): an error (one that wraps ErrMaxCost) ends the spec's run
	// before the step, the spec left where it was for the next run to
	// resume. Steps already running finish and are recorded.
	Budget func() error
}

// CallRecords is what the pipeline records of every agent call when its
// Records also implement it (the store does).
type CallRecords interface {
	StartSpecCall(ctx context.Context, specID, worktree, role string, attempt int) (int64, error)
	EndSpecCall(ctx context.Context, id int64, outcome string, costUSD float64) error
}

var _ CallRecords = (*store.Store)(nil)

// EventRecords counts the agent events of a call while it runs, when the
// Records also implement it (the store does): a Temporal worker's
// heartbeat reports the count.
type EventRecords interface {
	SetSpecCallEvents(ctx context.Context, id int64, n int) error
}

var _ EventRecords = (*store.Store)(nil)

// StopRequests is how a stop request (ralph stop) reaches the pipeline,
// when the Records also implement it (the store does): it ends a wait for
// a rate limit to lift, and the run, with an error that wraps ErrStopped.
type StopRequests interface {
	State(ctx context.Context, key string) (string, bool, error)
	DeleteState(ctx context.Context, key string) error
}

var _ StopRequests = (*store.Store)(nil)

// Pipeline runs specs.
type Pipeline struct {
	opt Options
	log *slog.Logger
}

// New returns a pipeline.
func New(opt Options) *Pipeline {
	if opt.MaxAttempts < 1 {
		opt.MaxAttempts = 3
	}
	if opt.MaxWait <= 0 {
		opt.MaxWait = time.Hour
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	if opt.Phrases == (Phrases{}) {
		opt.Phrases = DefaultPhrases()
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{opt: opt, log: logger.With("component", "spec")}
}

// Outcome is how a spec's run ended.
type Outcome string

// Outcomes.
const (
	Done    Outcome = "done"
	Failed  Outcome = "failed"
	Skipped Outcome = "skipped" // already done and not forced
	// Conflict: a parallel run's spec was done but could not land on the
	// run's branch, even after going back to its implementer once.
	Conflict Outcome = "conflict"
)

// Result is one spec's outcome.
type Result struct {
	Spec    Spec    `json:"spec"`
	Outcome Outcome `json:"outcome"`
	// Reason explains a failure (the last attempt's problem) or a skip.
	Reason  string  `json:"reason,omitempty"`
	CostUSD float64 `json:"cost_usd"`
	// Logs is the run's log folder, "" when no agent ran.
	Logs string `json:"logs,omitempty"`
}

// Report is a whole run's outcome.
type Report struct {
	Results []Result `json:"results"`
}

// Failed returns the results of the specs that failed.
func (r Report) Failed() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Outcome == Failed {
			out = append(out, x)
		}
	}
	return out
}

// Conflicts returns the results of the specs that could not land.
func (r Report) Conflicts() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Outcome == Conflict {
			out = append(out, x)
		}
	}
	return out
}

// ErrAgentUnavailable wraps agent.ErrNotFound: the run cannot go on.
var ErrAgentUnavailable = errors.New("agent unavailable")

// Run runs every spec in order. A spec that fails does not stop the
// others. It returns an error (with the report so far) only when the run
// cannot go on: the context ended, an agent is missing, a stop request or
// the run's deadline ended a wait for a rate limit (ErrStopped,
// ErrTimeUp), or the state files cannot be written.
func (p *Pipeline) Run(ctx context.Context, specs []Spec) (Report, error) {
	p.forgetStop(ctx) // one left from before this run is not for it
	defer p.forgetStop(ctx)
	var rep Report
	for i, s := range specs {
		p.progress("[%d/%d] %s", i+1, len(specs), s.Rel)
		res, err := p.runSpec(ctx, s)
		if err != nil {
			return rep, fmt.Errorf("spec %s: %w", s.Rel, err)
		}
		rep.Results = append(rep.Results, res)
		switch res.Outcome {
		case Done:
			p.progress("  %s: done", s.Rel)
		case Skipped:
			p.progress("  %s: skipped (%s)", s.Rel, res.Reason)
		case Failed:
			p.progress("  %s: FAILED: %s", s.Rel, res.Reason)
		}
	}
	return rep, nil
}

func (p *Pipeline) progress(format string, args ...any) {
	fmt.Fprintf(p.opt.Progress, format+"\n", args...)
}

// specRun is one spec's run: its record, its logs, its failures so far.
type specRun struct {
	s        Spec
	rec      store.SpecRecord
	logs     string
	failures int
	retry    bool   // the next step retries a failure: back off first
	rejected string // a person said no to a <Human> of the plan
	// oneStep: a <Human> not answered yet ends the step (Pipeline.Step)
	// instead of waiting.
	oneStep bool
	// interrupted: the record says an implementation attempt was under
	// way when this run began, so a kill ended it; the next attempt
	// continues from its commits.
	interrupted bool
}

// underWay ends the record's LastResult while an implementation attempt
// runs: found on a record when a run begins, a kill ended that attempt.
const underWay = " under way"

func (p *Pipeline) put(ctx context.Context, r *specRun, state string) error {
	if state != "" {
		r.rec.State = state
	}
	if p.opt.Records == nil {
		return nil
	}
	return p.opt.Records.PutSpec(ctx, r.rec)
}

// fail counts a failed attempt; it reports whether the spec is out of
// attempts.
func (p *Pipeline) fail(ctx context.Context, r *specRun, reason string) (bool, error) {
	r.failures++
	r.retry = true
	r.rec.LastResult = reason
	p.log.Info("attempt failed", "spec", r.s.Rel, "failures", r.failures, "reason", reason)
	p.progress("  %s: attempt failed (%d/%d): %s", r.s.Rel, r.failures, p.opt.MaxAttempts, reason)
	if r.failures >= p.opt.MaxAttempts {
		return true, p.put(ctx, r, StateFailed)
	}
	return false, p.put(ctx, r, "")
}

// open loads s's record and readies its run; skip is true when s is done
// and not forced.
func (p *Pipeline) open(ctx context.Context, s Spec) (r *specRun, skip bool, err error) {
	l := p.opt.Layout
	r = &specRun{s: s, rec: store.SpecRecord{ID: s.Rel, State: StateNew}}
	if p.opt.Records != nil {
		rec, ok, err := p.opt.Records.Spec(ctx, s.Rel)
		if err != nil {
			return nil, false, err
		}
		if ok {
			r.rec = rec
		}
	}
	done, err := l.IsDone(s)
	if err != nil {
		return nil, false, err
	}
	if done && !p.opt.Force {
		return r, true, nil
	}
	if done {
		if err := l.RemoveDone(s); err != nil {
			return nil, false, err
		}
		r.rec.BaseCommit, r.rec.Feedback = "", ""
	}
	// A planner killed mid-attempt may have left a partial plan with no
	// json: it is not a hand-written plan.
	if r.rec.State == StatePlanning {
		if info, err := l.LoadPlanInfo(s); err == nil && info == nil {
			_ = os.Remove(l.PlanPath(s))
		}
	}
	r.interrupted = r.rec.State == StateImplementing && strings.HasSuffix(r.rec.LastResult, underWay)
	r.logs = runDir(p.opt.LogDir, s, p.opt.Now())
	return r, false, nil
}

func (p *Pipeline) runSpec(ctx context.Context, s Spec) (Result, error) {
	l := p.opt.Layout
	r, skip, err := p.open(ctx, s)
	if err != nil {
		return Result{}, err
	}
	startCost := r.rec.CostUSD
	result := func(o Outcome, reason string) Result {
		return Result{Spec: s, Outcome: o, Reason: reason, CostUSD: r.rec.CostUSD - startCost, Logs: r.logs}
	}
	if skip {
		return result(Skipped, "already done"), nil
	}
	if why := unusable(l.SpecPath(s)); why != "" {
		// No agent can make anything of it: refused at once, not retried.
		return result(Failed, why), nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if p.opt.Budget != nil {
			if err := p.opt.Budget(); err != nil {
				return Result{}, err
			}
		}
		if r.retry {
			if err := p.backoff(ctx, r.failures); err != nil {
				return Result{}, err
			}
			r.retry = false
		}
		pos, err := l.Position(s, p.opt.Now())
		if err != nil {
			return Result{}, err
		}
		if pos.HandWritten {
			p.progress("  %s: adopted the hand-written plan %s", s.Rel, l.RootRel(l.PlanPath(s)))
		}
		var problem string
		switch pos.Step {
		case StepDone:
			r.rec.BaseCommit, r.rec.Feedback, r.rec.LastResult = "", "", "verified"
			if err := p.put(ctx, r, StateDone); err != nil {
				return Result{}, err
			}
			return result(Done, ""), nil
		case StepPlan:
			problem, err = p.plan(ctx, r, pos)
		case StepImplement:
			problem, err = p.implement(ctx, r, pos)
		case StepVerify:
			problem, err = p.verify(ctx, r, pos)
		}
		if err != nil {
			return Result{}, err
		}
		if r.rejected != "" {
			r.rec.LastResult = "rejected: " + r.rejected
			if err := p.put(ctx, r, StateFailed); err != nil {
				return Result{}, err
			}
			return result(Failed, "rejected by a person: "+r.rejected), nil
		}
		if problem == "" {
			continue
		}
		out, err := p.fail(ctx, r, problem)
		if err != nil {
			return Result{}, err
		}
		if out {
			return result(Failed, fmt.Sprintf("%s (after %d failed attempts)", problem, r.failures)), nil
		}
	}
}

// backoff waits before retry number n.
func (p *Pipeline) backoff(ctx context.Context, n int) error {
	d := p.opt.Backoff
	if d <= 0 {
		return ctx.Err()
	}
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	d = min(d, 5*time.Minute)
	p.progress("  retrying in %s", d)
	return agentcall.RealClock{}.Sleep(ctx, d)
}

// unusable says why the spec file at path cannot be worked from — empty,
// or not text — and "" when it can.
func unusable(path string) string {
	text, err := os.ReadFile(path)
	switch {
	case err != nil:
		return "cannot read the spec: " + err.Error()
	case strings.TrimSpace(string(text)) == "":
		return "the spec is empty: write what it asks for, then run again"
	case bytes.IndexByte(text, 0) >= 0 || !utf8.Valid(text):
		return "the spec is not text (a binary file?): a spec is Markdown"
	}
	return ""
}

// promptData fills what every prompt shares.
func (p *Pipeline) promptData(s Spec) (promptData, error) {
	l := p.opt.Layout
	text, err := os.ReadFile(l.SpecPath(s))
	if err != nil {
		return promptData{}, fmt.Errorf("read spec: %w", err)
	}
	scratch, err := os.ReadFile(filepath.Join(l.Root, Scratchpad))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return promptData{}, fmt.Errorf("read scratchpad: %w", err)
	}
	return promptData{
		SpecRel:        s.Rel,
		SpecID:         s.ID,
		SpecText:       strings.TrimSpace(string(text)),
		Root:           l.Root,
		Home:           filepath.Join(l.Root, ".ralph"),
		SpecPath:       l.RootRel(l.SpecPath(s)),
		PlanPath:       l.RootRel(l.PlanPath(s)),
		ScratchpadPath: Scratchpad,
		Scratchpad:     strings.TrimSpace(string(scratch)),
		Promise:        p.opt.Phrases.Planner,
		Pass:           p.opt.Phrases.Pass,
		Fail:           p.opt.Phrases.Fail,
	}, nil
}

// note appends the harness's judgement to a run log.
func note(dir, name, format string, args ...any) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "--- harness ---\n"+format+"\n\n", args...)
}

// fatal reports whether an agent error ends the whole run.
func fatal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, ErrAgentUnavailable) || errors.Is(err, ErrMaxCost) ||
		errors.Is(err, ErrStopped) || errors.Is(err, ErrTimeUp)
}

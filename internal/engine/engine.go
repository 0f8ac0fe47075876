// Package engine is ralph's loop: fresh-context iterations of an agent,
// driven through a harness-controlled PLAN → BUILD phase gate, ending only
// when the quality gates pass or a limit ends the run, always with a
// termination reason.
//
// One iteration (SPEC §4):
//
//  1. write iteration.txt; honour a pending stop request;
//  2. in the PLAN phase, validate plan.tsx when it has content: failures go
//     to feedback.md and the phase stays PLAN; a valid plan flips the phase
//     to BUILD with build instructions in feedback.md;
//  3. run the agent once, streaming its events into the store;
//  4. look for a completion signal: status.txt says complete, the final
//     message ends with the promise, or the agent finished without tools;
//  5. hand any signal to the one completion handler: in the PLAN phase with
//     a plan written it is deferred; otherwise the gates run and decide.
package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/sandbox"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Limits bound a run. Zero means no limit, except where noted.
type Limits struct {
	MaxIterations    int
	MaxDuration      time.Duration
	MaxCost          float64
	IterationTimeout time.Duration
	IdleTimeout      time.Duration
	// GateFailures ends the run after this many failed completion
	// attempts in a row (default 5).
	GateFailures int
	// AgentErrors ends the run after this many agent failures in a row
	// (default 3).
	AgentErrors int
	// MaxWait caps one wait for a rate limit (default 6h).
	MaxWait time.Duration
	// Backoff is the first wait after a rate limit with no reset time
	// (default 30s); each further one doubles.
	Backoff time.Duration
}

// LimitsFrom returns the limits ralph.toml's [limits] sets.
func LimitsFrom(l config.Limits) Limits {
	return Limits{
		MaxIterations:    l.MaxIterations,
		MaxDuration:      l.MaxDuration.Duration,
		MaxCost:          l.MaxCost,
		IterationTimeout: l.IterationTimeout.Duration,
		IdleTimeout:      l.IdleTimeout.Duration,
		GateFailures:     l.GateFailures,
		MaxWait:          l.MaxWait.Duration,
	}
}

// Options configure an Engine.
type Options struct {
	Agent agent.Agent
	// Fallbacks are the backends to switch to, in order, when the one in
	// use runs out: a usage limit that lifts later than Limits.MaxWait, or
	// a quota error that says no time. An ordinary failure never switches.
	Fallbacks []agent.Agent
	// AgentName is recorded with the task (defaults to Agent.Name()).
	AgentName string
	Gates     []gate.Gate
	Limits    Limits
	// Guard protects the files the gates depend on.
	Guard Guard
	// Promise is the completion promise; empty means the default.
	Promise string
	Stall   stall.Config
	// Registries are what plans are validated against.
	Registries plan.Registries
	// PlanContext, when set, resolves a validated plan into the body of
	// the build instructions (theme applied, recipes loaded). It must not
	// fail the transition: it reports problems in the text it returns.
	PlanContext func(ctx context.Context, root *plan.Node) string
	// TaskParser turns the message into task.md; nil means the template.
	TaskParser *task.Parser
	// Plan, when set, is a plan handed in for a new task (ralph run
	// --plan), already validated by the caller: it is written to
	// .ralph/plan.tsx after the pre-task snapshot and counts as this
	// task's plan, so the check at the top of iteration 1 opens BUILD
	// with the build instructions.
	Plan []byte
	// Snapshots saves the task-boundary snapshots; nil disables them.
	Snapshots *snapshot.Repo
	// Notify is told about things a person should know now (a human is
	// needed, a run stalled); nil means nobody.
	Notify func(ctx context.Context, message string)
	// Reporter shows progress; nil means silence.
	Reporter Reporter
	Logger   *slog.Logger
	// Request is the token of the ralph run request a new task answers
	// (.ralph/request.json). It is recorded with the task, in the same
	// transaction, so a resume can tell whether the request reached the
	// store. Empty means none.
	Request string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sandbox confines the agent's process; nil runs it unconfined.
	Sandbox *sandbox.Settings
	// YieldAfter, when above zero, makes Run and Resume return after this
	// many iterations of theirs that did not end the task, with Reason
	// Yielded: the task stays open and the next Resume goes on with the
	// next iteration, its counts (the gate-failure streak, stall
	// detection, agent errors, the fallback in use, the time spent)
	// where they were. A Temporal worker runs a task this way, one
	// iteration per activity (ralph run --yield-after 1).
	YieldAfter int
}

// Engine runs tasks in one workspace. The caller holds the workspace lock.
type Engine struct {
	ws  *workspace.Workspace
	st  *store.Store
	opt Options
	log *slog.Logger
}

// New returns an engine for ws that records into st.
func New(ws *workspace.Workspace, st *store.Store, opt Options) *Engine {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Reporter == nil {
		opt.Reporter = ReporterFunc(func(Progress) {})
	}
	if opt.Promise == "" {
		opt.Promise = "<promise>COMPLETE</promise>"
	}
	if opt.AgentName == "" && opt.Agent != nil {
		opt.AgentName = opt.Agent.Name()
	}
	l := &opt.Limits
	if l.GateFailures == 0 {
		l.GateFailures = 5
	}
	if l.AgentErrors == 0 {
		l.AgentErrors = 3
	}
	if l.MaxWait == 0 {
		l.MaxWait = 6 * time.Hour
	}
	if l.Backoff == 0 {
		l.Backoff = 30 * time.Second
	}
	return &Engine{ws: ws, st: st, opt: opt, log: opt.Logger.With("component", "engine")}
}

// Reason is why a run ended.
type Reason string

// Termination reasons (SPEC §4), each with its own exit code.
const (
	Completed          Reason = "completed"
	MaxIterations      Reason = "max-iterations"
	MaxDuration        Reason = "max-duration"
	MaxCost            Reason = "max-cost"
	GateFailures       Reason = "gate-failures"
	Stalled            Reason = "stalled"
	Stopped            Reason = "stopped"
	Rejected           Reason = "rejected"
	AgentError         Reason = "agent-error"
	Interrupted        Reason = "interrupted"
	NeedsClarification Reason = "needs-clarification"
	// Yielded does not end the task: the run returned after
	// Options.YieldAfter iterations and ralph resume goes on with it.
	Yielded Reason = "yielded"
)

// ExitCode is the process exit status for a reason.
func (r Reason) ExitCode() int {
	switch r {
	case Completed:
		return 0
	case MaxIterations:
		return 3
	case MaxDuration:
		return 4
	case MaxCost:
		return 5
	case GateFailures:
		return 6
	case Stalled:
		return 7
	case Stopped:
		return 8
	case Rejected:
		return 9
	case AgentError:
		return 10
	case NeedsClarification:
		return 11
	case Yielded:
		// 12 is ralph run --worktree's landing conflict.
		return 13
	case ProtectedChanged:
		return 14
	case StateLost:
		return 15
	case Interrupted:
		return 130
	}
	return 1
}

// Reasons lists every reason a task ends with, in exit-code order
// (Yielded, which leaves the task open, is not one).
func Reasons() []Reason {
	return []Reason{Completed, MaxIterations, MaxDuration, MaxCost, GateFailures, Stalled, Stopped, Rejected, AgentError, NeedsClarification, ProtectedChanged, StateLost, Interrupted}
}

// Outcome is how a run ended.
type Outcome struct {
	Reason Reason `json:"reason"`
	// Detail is the one-line explanation.
	Detail     string  `json:"detail"`
	Task       int     `json:"task"`
	TaskID     int64   `json:"task_id"`
	Iterations int     `json:"iterations"`
	CostUSD    float64 `json:"cost_usd"`
	// Elapsed is this invocation's wall time.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Tampers counts the agent's changes to what is not its own that
	// the harness undid or held in this task (tamper events).
	Tampers int `json:"tampers,omitempty"`
	// Unverified marks a completion that no gate of the project's own
	// checked: it rests on the agent's word, and Detail says so.
	Unverified bool `json:"unverified,omitempty"`
}

// ErrNothingToResume means the latest task already ended.
var ErrNothingToResume = errors.New("nothing to resume")

func (e *Engine) now() time.Time { return e.opt.Now() }

// detached returns a context for final writes that must happen even after
// ctx was cancelled (Ctrl-C), bounded so they cannot hang.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

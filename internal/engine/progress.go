package engine

import (
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/gate"
)

// Stage names what a Progress report is about.
type Stage string

// Progress stages.
const (
	StageTask      Stage = "task"      // a task started or resumed
	StageIteration Stage = "iteration" // an iteration started
	StageAgent     Stage = "agent"     // the agent did something (Event is set)
	StagePhase     Stage = "phase"     // the plan was checked or the phase changed
	StageGates     Stage = "gates"     // the gates ran
	StageWait      Stage = "wait"      // waiting out a rate limit or a human
	StageStall     Stage = "stall"     // a stall was detected
	StageNote      Stage = "note"      // anything else worth a line
	StageWarning   Stage = "warning"   // something the person watching should know (Message)
	StageError     Stage = "error"     // something went wrong that did not end the run (Message)
	StageEnd       Stage = "end"       // the run ended (Outcome is set)
)

// Progress is one thing a person watching the run should see.
type Progress struct {
	Stage     Stage         `json:"stage"`
	At        time.Time     `json:"at"`
	Task      int           `json:"task"`
	Iteration int           `json:"iteration"`
	Phase     string        `json:"phase"`
	Step      string        `json:"step,omitempty"`
	Message   string        `json:"message,omitempty"`
	Event     *agent.Event  `json:"event,omitempty"`
	ToolCalls int           `json:"tool_calls"`
	CostUSD   float64       `json:"cost_usd"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Outcome   *Outcome      `json:"outcome,omitempty"`
	// Gates are the verdicts of a gate run (StageGates).
	Gates []gate.Result `json:"gates,omitempty"`
}

// Reporter receives progress as it happens, from the engine's goroutine.
type Reporter interface {
	Report(Progress)
}

// ReporterFunc adapts a function to Reporter.
type ReporterFunc func(Progress)

// Report calls f.
func (f ReporterFunc) Report(p Progress) { f(p) }

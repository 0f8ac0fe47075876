package engine

import "github.com/ralph-harness/ralph/internal/gate"

// No gate, no claim (SPEC §9): when none of the run's gates checks the
// project's own work (gate.ChecksWork), ralph's built-ins can only check
// the protocol, so the run says so before it starts and a completion is
// worded as unverified. The exit code stays 0: the completion is honest,
// not verified.
const (
	// NoGateWarning is the warning a run without such a gate opens with.
	NoGateWarning = "no gate checks this task's work: completion rests on the agent's word — add [[gates]] or run ralph init"
	// UnverifiedDetail opens the detail of an unverified completion.
	UnverifiedDetail = "unverified: no gate checks this task's work"
)

// unverified reports whether no gate of the run checks the project's work.
func (e *Engine) unverified() bool { return len(gate.ChecksWork(e.opt.Gates)) == 0 }

// warnUnverified opens the run with NoGateWarning when no gate checks the
// work.
func (e *Engine) warnUnverified() {
	if e.unverified() {
		e.opt.Reporter.Report(Progress{Stage: StageWarning, At: e.now(), Message: NoGateWarning})
	}
}

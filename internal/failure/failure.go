// Package failure names why a ralph command failed. Commands and the
// packages under them return an *Error that carries a Reason (or an
// *Exited that carries a run's own exit code); the command layer turns
// it into the process's exit code in one place.
package failure

import "strconv"

// Reason is why a command failed: one of the reasons below, or the
// engine's reason for ending a task (a limit reached, a stop, an agent
// that cannot start, an interrupt), which New takes as it is.
type Reason string

// The reasons a command fails with beyond the engine's.
const (
	// Failed is a command that ran and could not do what was asked: no
	// run or request to act on, a workspace another run holds, a plan
	// that does not validate, a check that failed.
	Failed Reason = "failed"
	// Usage is a mistake in how ralph was invoked or configured.
	Usage Reason = "usage"
	// NotLanded is a finished task or spec whose branch could not land
	// on its target.
	NotLanded Reason = "not-landed"
)

// Error is a failure for a Reason.
type Error struct {
	Reason Reason
	// Err says what happened; nil when the command has already shown it.
	Err error
}

// New returns an *Error for reason r. A nil err means the command has
// already shown what went wrong.
func New[R ~string](r R, err error) error { return &Error{Reason: Reason(r), Err: err} }

func (e *Error) Error() string {
	if e.Err == nil {
		return string(e.Reason)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Exited is a run elsewhere (a Temporal worker's ralph) that ended with
// Code, which the command ends with too. What it did has been shown.
type Exited struct {
	Code int
}

func (e *Exited) Error() string { return "exit status " + strconv.Itoa(e.Code) }

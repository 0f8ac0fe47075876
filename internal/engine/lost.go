package engine

import (
	"context"
)

// StateLost ends a run whose .ralph/ was deleted under it (the agent's
// rm -rf .ralph, or the user's): the store, the lock and the logs went
// with it. The run stops at once; the store is written back from the copy
// the run still holds open, so status and resume know the task.
const StateLost Reason = "state-lost"

// lostDetail is StateLost's one-line explanation.
const lostDetail = ".ralph/ was deleted while the task ran (its store went with it); ralph wrote the store back from its open copy — check what deleted it, then run `ralph resume` to continue"

// stateLost reports whether the run's store is gone from .ralph/.
func (e *Engine) stateLost() bool { return e.st.Lost() }

// restoreState puts .ralph/ back after StateLost: its directory and
// ignore file, and the store, whole, with the run's end recorded.
func (e *Engine) restoreState(ctx context.Context, r *run) {
	if err := e.ws.Init(); err != nil {
		e.log.Error("recreate .ralph/", "err", err)
	}
	if err := e.st.WriteBack(ctx); err != nil {
		e.log.Error("write the store back", "err", err)
		e.report(r, Progress{Stage: StageError, Message: "could not write the store back: " + err.Error()})
	}
}

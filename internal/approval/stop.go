package approval

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
)

// RequestStop asks the running loop to stop after its current iteration
// (ralph stop), recording reason; without a running loop it is a failure.
func RequestStop(ctx context.Context, g *Globals, reason string) error {
	ws, st, err := session.OpenRunStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	pid := ws.HolderPID()
	if pid == 0 {
		return failure.New(failure.Failed, errors.New("no ralph run is active in this workspace"))
	}
	if err := st.SetState(ctx, store.KeyStopRequest, reason); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "stop requested; ralph (pid %d) stops after its current iteration\n", pid)
	return nil
}

// ClearStop withdraws a stop request the loop has not acted on yet (ralph
// stop --clear); with none pending it is a failure.
func ClearStop(ctx context.Context, g *Globals) error {
	_, st, err := session.OpenRunStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	reason, ok, err := st.State(ctx, store.KeyStopRequest)
	if err != nil {
		return err
	}
	if !ok {
		return failure.New(failure.Failed, errors.New("no stop request is pending: nothing to withdraw (a stop the loop acted on cannot be undone; ralph resume --force continues the task)"))
	}
	if err := st.DeleteState(ctx, store.KeyStopRequest); err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "stop request withdrawn (%s); the run goes on\n", reason)
	return nil
}

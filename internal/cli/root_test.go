package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
)

// TestExitError pins the exit code of every reason a command fails with:
// the codes are ralph's interface to scripts and CI.
func TestExitError(t *testing.T) {
	shown := errors.New("what happened")
	for _, tc := range []struct {
		err      error
		code     int
		showsErr bool
	}{
		{failure.New(failure.Failed, shown), 1, true},
		{failure.New(failure.Usage, shown), 2, true},
		{failure.New(failure.NotLanded, shown), 12, true},
		{failure.New(engine.MaxIterations, nil), 3, false},
		{failure.New(engine.MaxCost, shown), 5, true},
		{failure.New(engine.AgentError, shown), 10, true},
		{failure.New(engine.Yielded, nil), 13, false},
		{failure.New(engine.Interrupted, shown), 130, true},
		{fmt.Errorf("wrapped: %w", failure.New(failure.Failed, shown)), 1, true},
		{&failure.Exited{Code: 7}, 7, false},
		{shown, 2, true},
	} {
		ee := exitError(tc.err)
		if ee.Code != tc.code {
			t.Errorf("exitError(%v).Code = %d, want %d", tc.err, ee.Code, tc.code)
		}
		if got := ee.Err != nil; got != tc.showsErr {
			t.Errorf("exitError(%v).Err = %v, want shown %v", tc.err, ee.Err, tc.showsErr)
		}
	}
}

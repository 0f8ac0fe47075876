package spec

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent/script"
	"github.com/ralph-harness/ralph/internal/store"
)

// lockedBuffer is a bytes.Buffer that a running pipeline writes to while
// the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A spec whose planner is rate limited for ten minutes does not hold the
// run that long: a stop request (ralph stop) ends the wait and the run at
// once, and so does the run's deadline. A stop request left from before
// the run is not for it.
func TestRateLimitWaitEndsOnStopOrDeadline(t *testing.T) {
	limited := script.Iteration{Actions: []script.Action{{Tool: "rate_limit", Seconds: 600}, write("specs/plans/0001-foo.md", "# Plan\n")}, Final: complete}
	tests := []struct {
		name     string
		deadline time.Duration // from the start of the run; 0: none
		stop     bool          // ask the run to stop once it waits
		want     error
		wantText string
	}{
		{name: "stop request", stop: true, want: ErrStopped, wantText: "stopped on request while waiting out a rate limit: not today"},
		{name: "deadline", deadline: 1500 * time.Millisecond, want: ErrTimeUp, wantText: "the run's time is up (waiting out a rate limit)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			root := newRepo(t, map[string]string{"0001-foo.md": "# Foo\n\nWrite foo.txt.\n"})
			h := newHarness(t, root)
			var out lockedBuffer
			h.opt.Progress = &out
			h.opt.Planner = agentScript(t, limited)
			start := time.Now()
			if tc.deadline > 0 {
				h.opt.Deadline = start.Add(tc.deadline)
			}
			if err := h.st.SetState(ctx, store.KeyStopRequest, "left from an earlier run"); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := New(h.opt).Run(ctx, h.specs)
				done <- err
			}()

			waiting := time.After(20 * time.Second)
			for !strings.Contains(out.String(), "rate limited; waiting 10m0s") {
				select {
				case err := <-done:
					t.Fatalf("the run ended before it waited: %v\n%s", err, out.String())
				case <-waiting:
					t.Fatalf("the run never waited:\n%s", out.String())
				case <-time.After(20 * time.Millisecond):
				}
			}
			if tc.stop {
				// The stop request of an earlier run did not end this wait.
				select {
				case err := <-done:
					t.Fatalf("a stale stop request ended the run: %v", err)
				case <-time.After(1200 * time.Millisecond):
				}
				if err := h.st.SetState(ctx, store.KeyStopRequest, "not today"); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the run still waits 10s later:\n%s", out.String())
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("run ended with %v, want %v (%q)", err, tc.want, tc.wantText)
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("the run took %s", took)
			}
			if _, pending, _ := h.st.State(ctx, store.KeyStopRequest); pending {
				t.Error("the stop request outlived the run it stopped")
			}
			if exists(root, "specs/plans/0001-foo.md") {
				t.Error("the planner ran again after the wait was cut short")
			}
		})
	}
}

package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

const humanPlan = `<Plan name="deploy">
  <Phase name="Build">
    <Step name="Make">Write step1.txt</Step>
  </Phase>
  <Phase name="Release">
    <Human message="Deploy to prod?" %s/>
    <Step name="Deploy">Write step2.txt</Step>
    <Step name="Announce">Write step3.txt</Step>
  </Phase>
</Plan>`

func humanPlanWith(props string) string { return strings.Replace(humanPlan, "%s", props, 1) }

type runResult struct {
	out Outcome
	err error
}

func (h *harness) start(ctx context.Context, run func(context.Context) (Outcome, error)) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		out, err := run(ctx)
		done <- runResult{out, err}
	}()
	return done
}

// waitPending waits until the store has exactly one pending request.
func (h *harness) waitPending(done <-chan runResult) store.HumanRequest {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case r := <-done:
			h.t.Fatalf("the run ended before asking: %+v, %v", r.out, r.err)
		default:
		}
		p, err := h.st.PendingHumanRequests(context.Background())
		if err != nil {
			h.t.Fatal(err)
		}
		if len(p) > 1 {
			h.t.Fatalf("%d pending requests, want 1", len(p))
		}
		if len(p) == 1 {
			return p[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatal("no human request appeared")
	return store.HumanRequest{}
}

func (h *harness) result(done <-chan runResult) Outcome {
	h.t.Helper()
	select {
	case r := <-done:
		if r.err != nil {
			h.t.Fatal(r.err)
		}
		return r.out
	case <-time.After(15 * time.Second):
		h.t.Fatal("the run did not end")
	}
	return Outcome{}
}

// AC2 and AC3: a Human creates a pending request, the loop waits (status
// waiting, the next step not started), and an approval continues it.
func TestHumanBlocksUntilApproved(t *testing.T) {
	h := newHarness(t, humanPlanWith(""), 3)
	var mu sync.Mutex
	var notes []string
	h.opt.Notify = func(_ context.Context, msg string) {
		mu.Lock()
		notes = append(notes, msg)
		mu.Unlock()
	}
	ctx := context.Background()
	eng := h.engine()
	done := h.start(ctx, func(ctx context.Context) (Outcome, error) { return eng.Run(ctx, "ship it") })
	req := h.waitPending(done)
	if req.Prompt != "Deploy to prod?" || req.Type != store.HumanConfirmation || req.StepKey == "" {
		t.Fatalf("request = %+v", req)
	}
	if d := req.TimeoutAt.Sub(req.CreatedAt); d < 29*time.Minute || d > 31*time.Minute {
		t.Errorf("default timeout = %s, want 30m", d)
	}
	time.Sleep(300 * time.Millisecond) // the run keeps waiting
	if s := h.ws.Status(); s != workspace.StatusWaiting {
		t.Errorf("status.txt = %q while waiting", s)
	}
	if got := summarize(h.steps(req.TaskID)); strings.Contains(got, "step:Deploy") {
		t.Fatalf("the next step started before the approval: %s", got)
	}
	mu.Lock()
	if len(notes) != 1 || !strings.Contains(notes[0], "ralph approve") {
		t.Errorf("notifications = %q", notes)
	}
	mu.Unlock()

	approvedAt := time.Now()
	if _, err := h.st.ResolveHuman(ctx, req.ID, store.HumanApproved, "go"); err != nil {
		t.Fatal(err)
	}
	out := h.result(done)
	if out.Reason != Completed {
		t.Fatalf("outcome = %+v", out)
	}
	want := "phase:Build=done step:Make=done phase:Release=done human:Deploy to prod?=done step:Deploy=done step:Announce=done"
	if got := summarize(h.steps(out.TaskID)); got != want {
		t.Fatalf("rows = %s\nwant %s", got, want)
	}
	its, _ := h.st.Iterations(ctx, out.TaskID)
	for _, it := range its {
		if it.Step == "Release › Deploy" && it.StartedAt.Sub(approvedAt) > time.Second {
			t.Errorf("the approval was seen after %s", it.StartedAt.Sub(approvedAt))
		}
	}
}

// AC4: a rejection ends the run as rejected (exit 9) and the next step
// never starts.
func TestHumanRejectStops(t *testing.T) {
	h := newHarness(t, humanPlanWith(""), 3)
	ctx := context.Background()
	eng := h.engine()
	done := h.start(ctx, func(ctx context.Context) (Outcome, error) { return eng.Run(ctx, "ship it") })
	req := h.waitPending(done)
	if _, err := h.st.ResolveHuman(ctx, req.ID, store.HumanRejected, "not today"); err != nil {
		t.Fatal(err)
	}
	out := h.result(done)
	if out.Reason != Rejected || out.Reason.ExitCode() != 9 || !strings.Contains(out.Detail, "not today") {
		t.Fatalf("outcome = %+v", out)
	}
	got := summarize(h.steps(out.TaskID))
	if strings.Contains(got, "step:Deploy") || !strings.Contains(got, "human:Deploy to prod?=rejected") || !strings.Contains(got, "phase:Release=rejected") {
		t.Fatalf("rows = %s", got)
	}
	// resume --force asks again: a new request for the same Human.
	done = h.start(ctx, func(ctx context.Context) (Outcome, error) { return h.engine().Resume(ctx, true) })
	again := h.waitPending(done)
	if again.ID == req.ID {
		t.Fatal("a forced resume waited on the rejected request")
	}
	if _, err := h.st.ResolveHuman(ctx, again.ID, store.HumanApproved, ""); err != nil {
		t.Fatal(err)
	}
	if out := h.result(done); out.Reason != Completed {
		t.Fatalf("forced resume = %+v", out)
	}
}

// onReject="skip" skips the next step and goes on.
func TestHumanRejectSkip(t *testing.T) {
	h := newHarness(t, humanPlanWith(`onReject="skip" `), 3)
	ctx := context.Background()
	eng := h.engine()
	done := h.start(ctx, func(ctx context.Context) (Outcome, error) { return eng.Run(ctx, "ship it") })
	req := h.waitPending(done)
	if _, err := h.st.ResolveHuman(ctx, req.ID, store.HumanRejected, ""); err != nil {
		t.Fatal(err)
	}
	out := h.result(done)
	if out.Reason != Completed {
		t.Fatalf("outcome = %+v", out)
	}
	want := "phase:Build=done step:Make=done phase:Release=done human:Deploy to prod?=done step:Deploy=skipped step:Announce=done"
	if got := summarize(h.steps(out.TaskID)); got != want {
		t.Fatalf("rows = %s\nwant %s", got, want)
	}
}

// A timeout counts as a rejection.
func TestHumanTimeoutRejects(t *testing.T) {
	h := newHarness(t, humanPlanWith(`timeout="1s" `), 3)
	start := time.Now()
	out, err := h.engine().Run(context.Background(), "ship it")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Rejected || !strings.Contains(out.Detail, "timed out") {
		t.Fatalf("outcome = %+v", out)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %s", el)
	}
	reqs, _ := h.st.HumanRequests(context.Background(), out.TaskID)
	if len(reqs) != 1 || reqs[0].Status != store.HumanTimeout {
		t.Fatalf("requests = %+v", reqs)
	}
}

// A pending request survives the run's end: a resume waits on the same
// request instead of asking again.
func TestHumanPendingSurvivesResume(t *testing.T) {
	h := newHarness(t, humanPlanWith(""), 3)
	ctx, cancel := context.WithCancel(context.Background())
	eng := h.engine()
	done := h.start(ctx, func(ctx context.Context) (Outcome, error) { return eng.Run(ctx, "ship it") })
	req := h.waitPending(done)
	cancel()
	if out := h.result(done); out.Reason != Interrupted {
		t.Fatalf("outcome = %+v", out)
	}
	if s := h.ws.Status(); s != workspace.StatusWaiting && s != workspace.StatusRunning {
		t.Errorf("status.txt = %q", s)
	}

	bg := context.Background()
	done = h.start(bg, func(ctx context.Context) (Outcome, error) { return h.engine().Resume(ctx, false) })
	again := h.waitPending(done)
	if again.ID != req.ID {
		t.Fatalf("resume asked again (request %d), want it to wait on %d", again.ID, req.ID)
	}
	if _, err := h.st.ResolveHuman(bg, req.ID, store.HumanApproved, ""); err != nil {
		t.Fatal(err)
	}
	if out := h.result(done); out.Reason != Completed {
		t.Fatalf("resume = %+v", out)
	}
	if reqs, _ := h.st.HumanRequests(bg, req.TaskID); len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	// The finished step was not redone.
	its, _ := h.st.Iterations(bg, req.TaskID)
	n := 0
	for _, it := range its {
		if it.Step == "Build › Make" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("step Make ran in %d iterations, want 1", n)
	}
}

// ralph stop while a run waits on a Human: the run stops, the request
// stays pending.
func TestStopWhileWaiting(t *testing.T) {
	h := newHarness(t, humanPlanWith(""), 3)
	ctx := context.Background()
	eng := h.engine()
	done := h.start(ctx, func(ctx context.Context) (Outcome, error) { return eng.Run(ctx, "ship it") })
	req := h.waitPending(done)
	if err := h.st.SetState(ctx, store.KeyStopRequest, "lunch"); err != nil {
		t.Fatal(err)
	}
	out := h.result(done)
	if out.Reason != Stopped || !strings.Contains(out.Detail, "lunch") {
		t.Fatalf("outcome = %+v", out)
	}
	if got, _ := h.st.HumanRequestByID(ctx, req.ID); got.Status != store.HumanPending {
		t.Fatalf("request after stop = %+v", got)
	}
}

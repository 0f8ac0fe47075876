package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func openTest(t *testing.T) (*Store, int64) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	id, err := s.CreateTask(ctx, 1, "orchestrate", "fresh", "script")
	if err != nil {
		t.Fatal(err)
	}
	return s, id
}

func TestHumanRequestLifecycle(t *testing.T) {
	ctx := context.Background()
	s, task := openTest(t)
	deadline := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	r, err := s.RequestHuman(ctx, HumanRequest{TaskID: task, StepKey: "entry:1", Type: HumanSelect, Prompt: "Which region?", Options: []string{"eu", "us"}, TimeoutAt: deadline})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == 0 || r.Status != HumanPending || len(r.Options) != 2 || !r.TimeoutAt.Equal(deadline) {
		t.Fatalf("new request = %+v", r)
	}
	// Asking again for the same step returns the pending request.
	again, err := s.RequestHuman(ctx, HumanRequest{TaskID: task, StepKey: "entry:1", Prompt: "Which region?"})
	if err != nil || again.ID != r.ID {
		t.Fatalf("second request = %+v, %v; want id %d", again, err, r.ID)
	}
	pending, err := s.PendingHumanRequests(ctx)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %+v, %v", pending, err)
	}

	got, err := s.ResolveHuman(ctx, r.ID, HumanApproved, "eu")
	if err != nil || got.Status != HumanApproved || got.Response != "eu" || got.ResolvedAt.IsZero() {
		t.Fatalf("resolve = %+v, %v", got, err)
	}
	// Twice is an error that changes nothing.
	_, err = s.ResolveHuman(ctx, r.ID, HumanRejected, "")
	var np *NotPendingError
	if !errors.As(err, &np) || np.Request.Status != HumanApproved {
		t.Fatalf("second resolve err = %v", err)
	}
	if got, _ := s.HumanRequestByID(ctx, r.ID); got.Status != HumanApproved || got.Response != "eu" {
		t.Fatalf("after second resolve: %+v", got)
	}
	if _, err := s.ResolveHuman(ctx, 99, HumanApproved, ""); !errors.Is(err, ErrNoHumanRequest) {
		t.Fatalf("unknown id err = %v", err)
	}
	if pending, _ := s.PendingHumanRequests(ctx); len(pending) != 0 {
		t.Fatalf("pending after approve = %+v", pending)
	}
	// Once resolved, a new request for the step is a new row.
	next, err := s.RequestHuman(ctx, HumanRequest{TaskID: task, StepKey: "entry:1", Prompt: "Again?"})
	if err != nil || next.ID == r.ID {
		t.Fatalf("new request after resolve = %+v, %v", next, err)
	}
	latest, ok, err := s.LatestHumanRequest(ctx, task, "entry:1")
	if err != nil || !ok || latest.ID != next.ID {
		t.Fatalf("latest = %+v %v %v", latest, ok, err)
	}
}

func TestStepRows(t *testing.T) {
	ctx := context.Background()
	s, task := openTest(t)
	step := StepRecord{TaskID: task, Index: 0, Kind: StepKindStep, Phase: "Work", Name: "Task"}
	if err := s.StartStep(ctx, step); err != nil {
		t.Fatal(err)
	}
	if err := s.StartStep(ctx, step); err != nil {
		t.Fatal(err)
	}
	if err := s.EndStep(ctx, step, StepDone, "did it"); err != nil {
		t.Fatal(err)
	}
	if err := s.EndStep(ctx, StepRecord{TaskID: task, Index: 1, Kind: StepKindStop, Name: "Phase complete"}, StepStopped, "Phase complete"); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Steps(ctx, task)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
	if rows[0].Status != StepDone || rows[0].Detail != "did it" || rows[0].EndedAt.IsZero() || rows[1].Status != StepStopped {
		t.Fatalf("rows = %+v", rows)
	}
	if _, ok, _ := s.Step(ctx, task, StepKindStep, 2); ok {
		t.Fatal("a step that never started has a row")
	}
}

// A spec's <Human> belongs to no task: its request has task id 0 and is
// listed, found again by key and answered like a task's.
func TestSpecHumanRequest(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	r, err := s.RequestHuman(ctx, HumanRequest{StepKey: "spec:0001-a.md:plan-1:entry-0", Prompt: "Ship?"})
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.LatestHumanRequest(ctx, 0, "spec:0001-a.md:plan-1:entry-0")
	if err != nil || !ok || got.ID != r.ID || got.Status != HumanPending {
		t.Fatalf("latest = %+v, %v, %v", got, ok, err)
	}
	pending, err := s.PendingHumanRequests(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != r.ID {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	done, err := s.ResolveHuman(ctx, r.ID, HumanApproved, "")
	if err != nil || done.Status != HumanApproved {
		t.Fatalf("resolve = %+v, %v", done, err)
	}
}

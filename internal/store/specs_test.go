package store

import (
	"context"
	"path/filepath"
	"testing"
)

func TestSpecRecords(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok, err := s.Spec(ctx, "a.md"); ok || err != nil {
		t.Fatalf("missing spec: ok=%v err=%v", ok, err)
	}
	rec := SpecRecord{ID: "area/b.md", State: "planned", PlanAttempt: 1, CostUSD: 0.5, BaseCommit: "abc"}
	if err := s.PutSpec(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.State, rec.ImplAttempts, rec.VerifyAttempts, rec.Feedback, rec.LastResult = "failed", 2, 1, "fix it", "verify failed"
	if err := s.PutSpec(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSpec(ctx, SpecRecord{ID: "a.md", State: "done"}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Spec(ctx, "area/b.md")
	if !ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	if got.State != "failed" || got.ImplAttempts != 2 || got.VerifyAttempts != 1 || got.Feedback != "fix it" || got.BaseCommit != "abc" || got.CostUSD != 0.5 || got.UpdatedAt.IsZero() {
		t.Errorf("got %+v", got)
	}
	all, err := s.Specs(ctx)
	if err != nil || len(all) != 2 || all[0].ID != "a.md" {
		t.Errorf("Specs = %+v, %v", all, err)
	}
}

// A parallel run's worktree fields round-trip, and every call is recorded
// with its spec, worktree and times.
func TestSpecWorktreeAndCalls(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := SpecRecord{ID: "a.md", State: "landing", Worktree: "/w/.ralph/worktrees/a", Branch: "ralph/spec/a", LandedCommit: "c0ffee", Conflicts: 1}
	if err := s.PutSpec(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Spec(ctx, "a.md")
	if err != nil || got.Worktree != rec.Worktree || got.Branch != rec.Branch || got.LandedCommit != "c0ffee" || got.Conflicts != 1 {
		t.Fatalf("got %+v, %v", got, err)
	}
	id, err := s.StartSpecCall(ctx, "a.md", rec.Worktree, "implementer", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartSpecCall(ctx, "b.md", "/w/b", "planner", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.EndSpecCall(ctx, id, "agent finished", 0.25); err != nil {
		t.Fatal(err)
	}
	calls, err := s.SpecCalls(ctx, 0)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls %+v, %v", calls, err)
	}
	c := calls[0]
	if c.SpecID != "a.md" || c.Worktree != rec.Worktree || c.Role != "implementer" || c.Attempt != 2 || c.StartedAt.IsZero() || c.EndedAt.Before(c.StartedAt) || c.CostUSD != 0.25 || c.Outcome != "agent finished" {
		t.Errorf("call %+v", c)
	}
	if !calls[1].EndedAt.IsZero() {
		t.Errorf("a running call has an end: %+v", calls[1])
	}
	if later, _ := s.SpecCalls(ctx, id); len(later) != 1 || later[0].SpecID != "b.md" {
		t.Errorf("after %d: %+v", id, later)
	}
}

// A spec call's event count is recorded while it runs; the progress is the
// latest call's role and attempt with the events of every call.
func TestSpecCallProgress(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, _, ok, err := s.SpecCallProgress(ctx); ok || err != nil {
		t.Fatalf("no calls: ok %v, %v", ok, err)
	}
	a, _ := s.StartSpecCall(ctx, "a.md", "", "planner", 1)
	if err := s.SetSpecCallEvents(ctx, a, 4); err != nil {
		t.Fatal(err)
	}
	b, _ := s.StartSpecCall(ctx, "a.md", "", "implementer", 2)
	if err := s.SetSpecCallEvents(ctx, b, 3); err != nil {
		t.Fatal(err)
	}
	role, attempt, events, ok, err := s.SpecCallProgress(ctx)
	if err != nil || !ok || role != "implementer" || attempt != 2 || events != 7 {
		t.Errorf("progress = %s %d %d %v, %v", role, attempt, events, ok, err)
	}
}

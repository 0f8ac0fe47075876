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

package store

import (
	"context"
	"strings"
	"testing"
)

// An iteration's start sets the state it is given with it, and a start
// of the same number again (a retry after a rate limit) resets the row
// and sets the state again; a start with a key the database refuses
// records neither.
func TestStartIterationWithState(t *testing.T) {
	ctx := context.Background()
	s, task := openTest(t)
	if err := s.StartIteration(ctx, task, 1, "plan", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.State(ctx, "seal"); ok {
		t.Fatal("a start without state set some")
	}
	if err := s.EndIteration(ctx, Iteration{TaskID: task, Number: 1, Outcome: "continue"}); err != nil {
		t.Fatal(err)
	}
	if err := s.StartIteration(ctx, task, 2, "build", "", StateValue{Key: "seal", Value: "one"}, StateValue{Key: "other", Value: "two"}); err != nil {
		t.Fatal(err)
	}
	if err := s.StartIteration(ctx, task, 2, "build", "", StateValue{Key: "seal", Value: "again"}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"seal": "again", "other": "two"} {
		if got, _, err := s.State(ctx, key); err != nil || got != want {
			t.Errorf("state %s = %q, %v; want %q", key, got, err, want)
		}
	}
	its, err := s.Iterations(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 2 || its[1].Number != 2 || its[1].Phase != "build" || !its[1].EndedAt.IsZero() {
		t.Fatalf("iterations %+v, want 1 ended and 2 started", its)
	}

	// A state write the database refuses rolls the start back with it.
	if _, err := s.db.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON state WHEN new.key = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	if err := s.StartIteration(ctx, task, 3, "build", "", StateValue{Key: "refused", Value: "x"}); err == nil {
		t.Fatal("a start whose state was refused succeeded")
	}
	if its, _ := s.Iterations(ctx, task); len(its) != 2 {
		t.Errorf("iterations after a refused start: %d, want 2 (the start rolled back)", len(its))
	}
}

// DeleteStatePrefix removes the keys that begin with its prefix, and no
// other: not a key the prefix only begins, not one that sorts next to it.
func TestDeleteStatePrefix(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	keys := []string{"task:1:seal", "task:1:seal:task.md", "task:1:seal:task-history.md", "task:1:seal;", "task:10:seal:x", "task:1:seak"}
	for _, k := range keys {
		if err := s.SetState(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteStatePrefix(ctx, "task:1:seal:"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		_, ok, err := s.State(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if want := !strings.HasPrefix(k, "task:1:seal:"); ok != want {
			t.Errorf("key %q kept = %v, want %v", k, ok, want)
		}
	}
	if err := s.DeleteStatePrefix(ctx, ""); err == nil {
		t.Error("an empty prefix deleted everything")
	}
}

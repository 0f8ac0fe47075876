package temporalrun

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PruneRuns removes the step transcripts older than keep, the worktrees a
// killed worker left as old, and the workflow folders left empty; newer
// ones stay.
func TestPruneRuns(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	steps := map[string]time.Duration{
		"wf-old/1-plan":      10 * 24 * time.Hour,
		"wf-old/2-implement": 8 * 24 * time.Hour,
		"wf-mixed/1-plan":    9 * 24 * time.Hour,
		"wf-mixed/2-verify":  time.Hour,
		"wf-new/1-plan":      time.Minute,
	}
	worktrees := map[string]time.Duration{
		"wf-killed/step-2-attempt-1": 9 * 24 * time.Hour,
		"wf-now/step-1-attempt-1":    time.Minute,
		// Older than keep, but an activity may still run it.
		"wf-long/step-1-attempt-1": 7*24*time.Hour + time.Minute,
	}
	for rel, age := range worktrees {
		dir := filepath.Join(cache, "worktrees", rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	for rel, age := range steps {
		dir := filepath.Join(cache, "runs", rel)
		if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ralph.db"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	r := &Runner{Cache: cache, Log: slog.New(slog.DiscardHandler)}
	n, err := r.PruneRuns(now, 7*24*time.Hour)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d, %v; want 4", n, err)
	}
	for rel, age := range worktrees {
		_, err := os.Stat(filepath.Join(cache, "worktrees", rel))
		if kept := err == nil; kept != (age < 8*24*time.Hour) {
			t.Errorf("worktree %s (age %s): kept = %v", rel, age, kept)
		}
	}
	for rel, age := range steps {
		_, err := os.Stat(filepath.Join(cache, "runs", rel))
		if kept := err == nil; kept != (age < 7*24*time.Hour) {
			t.Errorf("%s (age %s): kept = %v", rel, age, kept)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "runs", "wf-old")); !os.IsNotExist(err) {
		t.Errorf("the emptied workflow folder stays: %v", err)
	}
	if n, err := (&Runner{Cache: t.TempDir()}).PruneRuns(now, time.Hour); n != 0 || err != nil {
		t.Errorf("no runs/ yet: %d, %v", n, err)
	}
}

package temporalrun

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PruneRuns removes the step transcripts older than keep and the workflow
// folders left empty; newer ones stay.
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
	if err != nil || n != 3 {
		t.Fatalf("pruned %d, %v; want 3", n, err)
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

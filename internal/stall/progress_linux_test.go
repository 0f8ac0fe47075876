package stall

import (
	"context"
	"testing"
)

// TestTrackerNeverWatchesIgnored checks that ignored and skipped
// directories are not watched, and that changing only them is no progress.
func TestTrackerNeverWatchesIgnored(t *testing.T) {
	dir := newRepo(t)
	tr := NewTracker(dir, skipLikeEngine, nil)
	defer tr.Close()
	ctx := context.Background()
	before, err := tr.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"build", "node_modules", "node_modules/dep"} {
		if tr.w.watching(d) {
			t.Errorf("%s is watched", d)
		}
	}
	if !tr.w.watching("src/p1") {
		t.Error("src/p1 is not watched")
	}
	writeFile(t, dir, "build/more/out.o", "x")
	writeFile(t, dir, "node_modules/dep/index.js", "changed")
	writeFile(t, dir, "src/debug.log", "more log")
	writeFile(t, dir, "src/new/trace.log", "log in a new directory")
	after, err := tr.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Error("changing ignored files changed the hash")
	}
	writeFile(t, dir, "keep.log", "tracked, so it counts")
	if h, _ := tr.Hash(ctx); h == after {
		t.Error("changing a tracked file a pattern matches did not change the hash")
	}
}

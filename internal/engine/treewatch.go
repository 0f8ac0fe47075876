package engine

import (
	"context"

	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/stall"
)

// treeWatch shares the loop's Tracker between the two that read the
// working tree after an iteration: the iteration's snapshot, which learns
// from it what changed, and the stall detector, which takes the same hash
// so that both see the same iteration.
type treeWatch struct {
	tracker *stall.Tracker // nil outside the loop
	// hash is the Tracker's value as changes read it; fresh until the
	// detector takes it.
	hash  string
	fresh bool
	// saved is the hash the previous snapshot recorded.
	saved string
}

// changes reads the tree's hash and what changed since the last call:
// known and empty when the hash did not change (ralph's bookkeeping in
// .ralph/, which the hash leaves out and the iteration diffs too, aside),
// unknown when the Tracker cannot say.
func (w *treeWatch) changes(ctx context.Context) snapshot.Changes {
	if w.tracker == nil {
		return snapshot.Changes{}
	}
	h, err := w.tracker.Hash(ctx)
	if err != nil {
		w.fresh, w.saved = false, ""
		return snapshot.Changes{}
	}
	paths, complete := w.tracker.Changes()
	prev := w.saved
	w.hash, w.fresh, w.saved = h, true, h
	if complete && prev == h {
		return snapshot.Changes{Known: true}
	}
	return snapshot.Changes{Known: complete, Paths: paths}
}

// take returns the hash changes read, once.
func (w *treeWatch) take() (string, bool) {
	h, ok := w.hash, w.fresh
	w.fresh = false
	return h, ok
}

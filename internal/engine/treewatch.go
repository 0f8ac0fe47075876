package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/stall"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// treeWatch shares the task's Tracker between those that read the
// working tree at the task's boundary and after each iteration: the
// snapshots (pre-task, iteration trees, the protected-files diff,
// post-task), which learn from it what changed since the tree they last
// returned, and the stall detector, which takes the same hash so that
// both see the same iteration.
type treeWatch struct {
	tracker *stall.Tracker // nil outside the task
	// hash is the Tracker's value as changes read it; fresh until the
	// detector takes it.
	hash  string
	fresh bool
	// saved is the hash as changes last read it.
	saved string
	// base is the tree the snapshots last returned while the Tracker
	// watched and had handed over every change before it: what the
	// Tracker's changes count from. "" when unknown: the next read is
	// a whole one.
	base string
	// owed are the paths a read that was not exact left out (ralph's
	// bookkeeping, the hash unchanged): the next read that stages paths
	// stages them too, so base plus the changes stays the tree.
	owed map[string]bool
	// first brings the first walk's hash while it runs in the
	// background (watchTree); ready waits for it.
	first chan string
	// pending brings the tree that a record begun in the background
	// (recordBehind) returned; settle waits for it.
	pending chan string
	// offer tells the first walk whether a whole snapshot of the tree
	// refreshed the snapshots' index (indexRefreshed), when watchTree was
	// asked to wait for one; ready tells it no if no snapshot did.
	offer func(ok bool, unstaged []string)
}

// watchTree starts a Tracker of the workspace and returns once it
// watches every directory, its first walk reading the files in the
// background (ready waits for it, and every use of the Tracker waits).
// Changes start from a clean slate after the walk; so a snapshot of the
// tree begun after watchTree returns (base) plus the changes reported
// since is the tree as it is.
func (e *Engine) watchTree(ctx context.Context, awaitIndex bool) treeWatch {
	t := stall.NewTracker(e.ws.Root, skipForTreeHash, e.log)
	var offer func(bool, []string)
	if awaitIndex && e.opt.Snapshots != nil && e.opt.Snapshots.Root() == e.ws.Root {
		// The snapshots' private index, which the pre-task snapshot
		// brings up to date with the tree (indexRefreshed), all but ralph's
		// private files and the files it left unstaged.
		path, gitDir := e.opt.Snapshots.IndexFile()
		var unstaged map[string]bool // written before the walk hears (tell)
		stale := func(rel string) bool {
			return unstaged[rel] || strings.HasPrefix(rel, workspace.Dir+"/") && workspace.IsPrivate(rel)
		}
		tell := t.AwaitIndex(stall.RefreshedIndex{Path: path, GitDir: gitDir, Stale: stale})
		offer = func(ok bool, paths []string) {
			for _, p := range paths {
				if unstaged == nil {
					unstaged = map[string]bool{}
				}
				unstaged[p] = true
			}
			tell(ok)
		}
	}
	first, watching := make(chan string, 1), make(chan struct{})
	go func() {
		h, err := t.Start(ctx, func() { close(watching) })
		if err != nil {
			h = ""
		}
		t.Changes()
		first <- h
	}()
	select {
	case <-watching:
	case h := <-first:
		first <- h // it walks no more: ready takes it
	}
	return treeWatch{tracker: t, first: first, offer: offer}
}

// indexRefreshed tells the Tracker's first walk, if it still waits to
// hear, whether a whole snapshot begun after watchTree returned has just
// brought the snapshots' private index up to date with the tree, all but
// the files it left unstaged (snapshot.Repo.Unstaged): then the walk
// takes the other files' states from it instead of examining each one.
func (w *treeWatch) indexRefreshed(ok bool, unstaged []string) {
	if w.offer != nil {
		w.offer(ok, unstaged)
		w.offer = nil
	}
}

// ready waits for the Tracker's first walk (telling it, if it still
// waits, that no snapshot refreshed the index) and for the record begun
// in the background, if any (settle).
func (w *treeWatch) ready() {
	w.indexRefreshed(false, nil)
	if w.first != nil {
		w.saved = <-w.first
		w.first = nil
	}
	w.settle()
}

// recordBehind runs save, which records a tree with the snapshots, in
// the background; settle (and every read of the Tracker's changes after)
// waits for it and notes its tree (recorded).
func (w *treeWatch) recordBehind(save func() string) {
	w.settle()
	ch := make(chan string, 1)
	w.pending = ch
	go func() { ch <- save() }()
}

// settle waits for the record recordBehind began, if any, and notes its
// tree.
func (w *treeWatch) settle() {
	if w.pending != nil {
		w.recorded(<-w.pending)
		w.pending = nil
	}
}

// close stops the Tracker, once.
func (w *treeWatch) close() {
	w.ready()
	if w.tracker != nil {
		w.tracker.Close()
	}
	*w = treeWatch{}
}

// changes reads the tree's hash and what changed since the last call,
// counted from base: unknown when the Tracker cannot say or the snapshots
// returned no tree since it started. Unless exact, known and empty when
// the hash did not change (ralph's bookkeeping in .ralph/, which the hash
// leaves out and the iteration diffs too, aside); exact, every path the
// Tracker saw, for a snapshot that must be the tree as it is.
func (w *treeWatch) changes(ctx context.Context, exact bool) snapshot.Changes {
	if w.tracker == nil {
		return snapshot.Changes{}
	}
	w.ready()
	h, err := w.tracker.Hash(ctx)
	if err != nil {
		w.fresh, w.saved, w.base = false, "", ""
		return snapshot.Changes{}
	}
	paths, complete := w.tracker.Changes()
	prev := w.saved
	w.hash, w.fresh, w.saved = h, true, h
	complete = complete && w.base != ""
	if !complete {
		w.owed = nil // a whole read
		return snapshot.Changes{Since: w.base}
	}
	if !exact && prev == h {
		if w.owed == nil {
			w.owed = map[string]bool{}
		}
		for _, p := range paths {
			w.owed[p] = true
		}
		return snapshot.Changes{Known: true, Since: w.base}
	}
	for p := range w.owed {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	w.owed = nil
	return snapshot.Changes{Known: true, Paths: paths, Since: w.base}
}

// take returns the hash changes read, once.
func (w *treeWatch) take() (string, bool) {
	h, ok := w.hash, w.fresh
	w.fresh = false
	return h, ok
}

// treeChanges is what the snapshots are told changed since r's tree
// watch last recorded a tree: nothing known when the snapshots are of
// another tree than the workspace the Tracker watches.
func (e *Engine) treeChanges(ctx context.Context, r *run, exact bool) snapshot.Changes {
	ch := r.tree.changes(ctx, exact)
	if e.opt.Snapshots == nil || e.opt.Snapshots.Root() != e.ws.Root {
		r.tree.base = ""
		return snapshot.Changes{} // the Tracker's paths are not the snapshots'
	}
	return ch
}

// recorded notes the tree the snapshots just returned, read with the
// Tracker's changes up to now ("" after a failure: the next read is a
// whole one).
func (w *treeWatch) recorded(tree string) {
	if w.tracker != nil {
		w.base = tree
	}
}

// endRead is the whole read of the tree the protected-files check makes
// when the agent asks to finish, shared with task-N-post: between the two
// no agent process runs (its groups ended with its call), so the tree
// changes only by the harness's own hand, which notes every path it
// writes. The read is not shared (task-N-post reads the whole tree
// again) when a gate ran that may write the tree (mayWriteTheTree: one
// that starts a process the agent controls, which may write anywhere),
// or a person was asked, who may.
type endRead struct {
	shared bool
	// paths are the files the harness wrote or removed since the read.
	paths []string
}

// wrote notes files the harness wrote or removed since the read.
func (x *endRead) wrote(paths ...string) {
	if x.shared {
		x.paths = append(x.paths, paths...)
	}
}

// drop makes task-N-post read the whole tree.
func (x *endRead) drop() { *x = endRead{} }

// postChanges is what task-N-post is told changed since the
// protected-files check read the tree: the harness's own writes since and
// what the Tracker saw, counted from that read's tree; the whole tree
// when the read is not shared or the Tracker cannot say.
func (e *Engine) postChanges(ctx context.Context, r *run) snapshot.Changes {
	x := r.endRead
	r.endRead = endRead{}
	if !x.shared {
		return snapshot.Changes{}
	}
	ch := e.treeChanges(ctx, r, true)
	if !ch.Known {
		return snapshot.Changes{}
	}
	// The files the harness writes after the gates pass, beside those
	// it put back.
	for _, p := range append(x.paths, workspace.Dir+"/"+workspace.Status, workspace.Dir+"/"+workspace.Feedback) {
		if !slices.Contains(ch.Paths, p) {
			ch.Paths = append(ch.Paths, p)
		}
	}
	return ch
}

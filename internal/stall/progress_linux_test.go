package stall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// TestTrackerRescansAfterOverflow makes more changes than the kernel
// queues events for (fs.inotify.max_queued_events, 16384 by default): the
// tracker must notice the lost events and walk the tree again.
func TestTrackerRescansAfterOverflow(t *testing.T) {
	dir := newRepo(t)
	tr := NewTracker(dir, skipLikeEngine, nil)
	defer tr.Close()
	ctx := context.Background()
	if _, err := tr.Hash(ctx); err != nil {
		t.Fatal(err)
	}
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			limit = n
		}
	}
	// Each new file queues two events: created, then written. fsnotify
	// may have read up to 4096 of them out of the kernel's queue already.
	n := limit/2 + 4096 + 500
	for i := range n {
		writeFile(t, dir, fmt.Sprintf("src/p0/many%d.txt", i), "x")
	}
	got, err := tr.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.rescans != 1 {
		t.Fatalf("%d rescans, want 1", tr.rescans)
	}
	if len(tr.files) < n {
		t.Fatalf("the tracker knows %d files after %d were added", len(tr.files), n)
	}
	fresh := NewTracker(dir, skipLikeEngine, nil)
	defer fresh.Close()
	if want, _ := fresh.Hash(ctx); got != want {
		t.Fatal("after the overflow the hash is not a fresh walk's")
	}
	if tr.walk {
		t.Fatal("the tracker gave up watching")
	}
}

// TestTrackerCanceled checks that a canceled Hash leaves the tracker
// watching: the next Hash walks the tree again and is right.
func TestTrackerCanceled(t *testing.T) {
	dir := newRepo(t)
	tr := NewTracker(dir, skipLikeEngine, nil)
	defer tr.Close()
	ctx := context.Background()
	before, err := tr.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "src/new/a.txt", "a")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tr.Hash(canceled); err == nil {
		t.Fatal("Hash with a canceled context succeeded")
	}
	after, err := tr.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after == before || tr.walk || tr.w == nil {
		t.Fatalf("after a canceled Hash: changed %v, walking %v, watching %v", after != before, tr.walk, tr.w != nil)
	}
}

// TestTrackerChanges checks what a Tracker tells the iteration snapshots:
// the files changed since the last call, the harness's own .ralph/ files
// included and ignored files left out, and "unknown" whenever it walked,
// a directory came or went, or skip leaves a directory unwatched that git
// does not ignore.
func TestTrackerChanges(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	tr := NewTracker(dir, skipLikeEngine, nil)
	defer func() { tr.Close() }()
	hashAndChanges := func() ([]string, bool) {
		t.Helper()
		if _, err := tr.Hash(ctx); err != nil {
			t.Fatal(err)
		}
		return tr.Changes()
	}
	if _, complete := hashAndChanges(); complete {
		t.Error("the first walk's changes are complete")
	}
	writeFile(t, dir, "src/p0/f0.go", "package p0 // changed\n")
	if _, complete := hashAndChanges(); complete {
		t.Error("changes are complete with node_modules, which git does not ignore, unwatched")
	}

	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "no node_modules")
	writeFile(t, dir, ".ralph/iteration.txt", "1")
	tr.Close()
	tr = NewTracker(dir, skipLikeEngine, nil)
	hashAndChanges()
	writeFile(t, dir, "src/p0/f0.go", "package p0 // again\n")
	writeFile(t, dir, ".ralph/iteration.txt", "2")
	writeFile(t, dir, "src/p1/new.go", "package p1\n")
	writeFile(t, dir, "src/more.log", "ignored\n")
	if err := os.Remove(filepath.Join(dir, "README")); err != nil {
		t.Fatal(err)
	}
	paths, complete := hashAndChanges()
	want := []string{".ralph/iteration.txt", "README", "src/p0/f0.go", "src/p1/new.go"}
	if !complete || !slices.Equal(paths, want) {
		t.Errorf("changes = %v complete %v, want %v complete", paths, complete, want)
	}
	if paths, complete := hashAndChanges(); !complete || len(paths) != 0 {
		t.Errorf("changes with nothing changed = %v complete %v", paths, complete)
	}
	writeFile(t, dir, "src/fresh/a.go", "package fresh\n")
	if _, complete := hashAndChanges(); complete {
		t.Error("changes are complete after a new directory")
	}
	if err := os.RemoveAll(filepath.Join(dir, "src/p2")); err != nil {
		t.Fatal(err)
	}
	if _, complete := hashAndChanges(); complete {
		t.Error("changes are complete after a directory went")
	}
	if paths, complete := hashAndChanges(); !complete || len(paths) != 0 {
		t.Errorf("changes after the directories settled = %v complete %v", paths, complete)
	}
	runGit(t, filepath.Join(dir, "src", "p1"), "init", "-q")
	if _, complete := hashAndChanges(); complete {
		t.Error("changes are complete after a repository came inside the tree")
	}
}

// Start calls its watching func once every directory is watched, before
// the walk reads the files: a change made from then on is among the
// Changes after the next Hash, so a read of the tree begun there (the
// pre-task snapshot's) plus those Changes is the tree.
func TestTrackerStartWatching(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "no node_modules")
	tr := NewTracker(dir, skipLikeEngine, nil)
	defer tr.Close()
	calls := 0
	if _, err := tr.Start(ctx, func() {
		calls++
		if !tr.w.watching("src/p2") {
			t.Error("watching was called before src/p2 was watched")
		}
		writeFile(t, dir, "src/p2/f2.go", "package p2 // changed while the walk read the files\n")
	}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("watching was called %d times, want once", calls)
	}
	tr.Changes() // the first walk's: not complete
	if _, err := tr.Hash(ctx); err != nil {
		t.Fatal(err)
	}
	paths, complete := tr.Changes()
	if !complete || !slices.Contains(paths, "src/p2/f2.go") {
		t.Errorf("Changes after the walk = %v (complete %v), want src/p2/f2.go, complete", paths, complete)
	}
	// A rescan does not call it again.
	writeFile(t, dir, ".gitignore", "build/\n*.log\n*.tmp\n")
	if _, err := tr.Hash(ctx); err != nil || calls != 1 {
		t.Errorf("after a rescan watching was called %d times (%v), want once", calls, err)
	}
}

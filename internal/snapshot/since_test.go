package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// Changes counted from a tree the Repo returned spare the task's boundary
// its reads of the whole tree: iteration 0 is the pre-task snapshot's tree
// when nothing changed (no git at all), and the protected-files diff and
// the post-task snapshot stage only the paths a watcher named (no git
// status). Each tree is the one a full read gives. A Since that is no
// longer the private index's last tree (something staged since) falls
// back to a full read.
func TestChangesSince(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "go.mod", "module m\n")
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := r.Save(ctx, TaskPre(1), "before")
	if err != nil {
		t.Fatal(err)
	}
	log := testutil.LogGit(t)

	zero, err := r.SaveIteration(ctx, 1, 0, Changes{Known: true, Since: pre.Tree})
	if err != nil {
		t.Fatal(err)
	}
	if zero != pre.Tree {
		t.Errorf("iteration 0 = %s, want the pre-task tree %s", zero, pre.Tree)
	}
	if calls := gitCalls(t, log); slices.ContainsFunc(calls, readsTree) {
		t.Errorf("iteration 0 with nothing changed ran %v", calls)
	}

	// The agent changes a protected file and adds one: the diff names
	// both, from the two paths alone.
	write(t, dir, "go.mod", "module m\n\ngo 1.22\n")
	write(t, dir, "b.txt", "b\n")
	diff, now, err := r.DiffChanged(ctx, pre.Name, Changes{Known: true, Since: zero, Paths: []string{"b.txt", "go.mod"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := changeList(diff); got != "added b.txt, modified go.mod" {
		t.Errorf("diff = %s, want added b.txt, modified go.mod", got)
	}
	if calls := gitCalls(t, log); slices.Contains(calls, "status") || slices.Contains(calls, "add") {
		t.Errorf("a known change's diff ran %v, want no read of the whole tree", calls)
	}

	// The post-task snapshot: a removal since the diff.
	if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	post, err := r.SaveChanged(ctx, TaskPost(1), "after", Changes{Known: true, Since: now, Paths: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if calls := gitCalls(t, log); slices.Contains(calls, "status") || slices.Contains(calls, "add") {
		t.Errorf("a known change's snapshot ran %v, want no read of the whole tree", calls)
	}
	full, err := r.Save(ctx, Manual(r.now()), "full read")
	if err != nil {
		t.Fatal(err)
	}
	if post.Tree != full.Tree {
		t.Errorf("post-task tree %s differs from a full read's %s: %v", post.Tree, full.Tree, treeFiles(t, dir, post.Tree))
	}
	gitCalls(t, log)

	// A Since from before something else staged (a diff of the whole
	// tree): a full read, the change the watcher did not name included.
	if _, err := r.Diff(ctx, pre.Name); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "c.txt", "c\n")
	gitCalls(t, log)
	again, err := r.SaveIteration(ctx, 1, 1, Changes{Known: true, Since: post.Tree})
	if err != nil {
		t.Fatal(err)
	}
	if calls := gitCalls(t, log); !slices.Contains(calls, "status") {
		t.Errorf("a stale Since ran %v, want a full read", calls)
	}
	r.pendingTrees.wait(r) // the trees are written in the background
	if got := treeFiles(t, dir, again); !slices.Contains(got, "c.txt") {
		t.Errorf("tree after a stale Since holds %v, want c.txt", got)
	}
}

// readsTree reports whether the git subcommand sub reads or writes the
// working tree's state.
func readsTree(sub string) bool {
	return sub == "status" || sub == "add" || sub == "update-index" || sub == "write-tree"
}

func changeList(fcs []FileChange) string {
	var s []string
	for _, fc := range fcs {
		s = append(s, string(fc.Change)+" "+fc.Path)
	}
	return strings.Join(s, ", ")
}

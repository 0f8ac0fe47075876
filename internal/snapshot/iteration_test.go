package snapshot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// Each iteration's tree joins the task's chain, outside the snapshots; its
// change is measured without ralph's own bookkeeping in .ralph/.
func TestSaveIterationChain(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a\n")
	write(t, dir, ".ralph/iteration.txt", "0")
	base, err := r.SaveIteration(ctx, 1, 0, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a\nb\n")
	write(t, dir, ".ralph/iteration.txt", "1")
	write(t, dir, ".ralph/plan.tsx", "<App/>\n")
	one, err := r.SaveIteration(ctx, 1, 1, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IterationBase(ctx, 1); got != base {
		t.Errorf("IterationBase = %q, want %q", got, base)
	}
	st, err := r.StatTrees(ctx, base, one)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 2 || st.Added != 2 || st.Deleted != 0 {
		t.Errorf("stat = %+v, want a.txt +1 and plan.tsx +1 (iteration.txt left out)", st)
	}
	changes, texts, err := r.DiffTrees(ctx, base, one, 1<<20)
	if err != nil || len(changes) != 2 || !strings.Contains(texts["a.txt"], "+b") {
		t.Errorf("diff = %+v %q %v", changes, texts, err)
	}
	// A later task with the same number (after a rollback) measures from
	// its own start.
	write(t, dir, "c.txt", "c\n")
	again, err := r.SaveIteration(ctx, 1, 0, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.IterationBase(ctx, 1); got != again {
		t.Errorf("IterationBase after a second start = %q, want %q", got, again)
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 0 {
		t.Errorf("iterations show as snapshots: %+v %v", list, err)
	}
	out, err := exec.Command("git", "-C", dir, "rev-list", "--count", IterationRefPrefix+"task-1").Output()
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Errorf("chain = %q %v, want 3 commits", out, err)
	}
}

// BenchmarkSaveIteration is what keeping an iteration's tree costs the
// loop, over a committed project of 2,000 files with one file changed
// between iterations.
func BenchmarkSaveIteration(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	for i := range 2000 {
		p := filepath.Join(dir, "src", fmt.Sprintf("p%d", i%40), fmt.Sprintf("f%d.go", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(fmt.Sprintf("package p\n\nvar X%d = %d\n", i, i)), 0o644)
	}
	r, err := Open(ctx, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.SaveIteration(ctx, 1, 0, Changes{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		_ = os.WriteFile(filepath.Join(dir, "src", "p0", "f0.go"), []byte(fmt.Sprintf("package p\n\nvar X0 = %d\n", i)), 0o644)
		if _, err := r.SaveIteration(ctx, 1, i+1, Changes{Known: true, Paths: []string{"src/p0/f0.go"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// gitCalls returns the subcommands the logged git ran since the last
// call, and forgets them.
func gitCalls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_ = os.Remove(log)
	var subs []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		for i := 0; i < len(f); i++ {
			if f[i] == "-c" {
				i++
				continue
			}
			subs = append(subs, f[i])
			break
		}
	}
	return subs
}

// An iteration whose changes a watcher reported costs no git when nothing
// changed and no git status when something did; the tree it records is
// the one a full read of the working tree gives, the dashboard's diffs
// stay right, and the chain holds every iteration once flushed.
func TestSaveIterationChanges(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "b.txt", "b\n")
	write(t, dir, "sub/c.txt", "c\n")
	write(t, dir, ".ralph/iteration.txt", "0")
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.commits.delay = time.Hour // written on FlushIterations only
	base, err := r.SaveIteration(ctx, 1, 0, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	// The task's start is on the chain at once, for the dashboard.
	if out, err := exec.Command("git", "-C", dir, "log", "--format=%T %s", IterationRefPrefix+"task-1").Output(); err != nil || string(out) != base+" task 1 iteration 0\n" {
		t.Errorf("chain after iteration 0 = %q %v, want its commit at once", out, err)
	}
	log := testutil.LogGit(t)

	// Nothing changed but ralph's own bookkeeping: no git at all.
	write(t, dir, ".ralph/iteration.txt", "1")
	same, err := r.SaveIteration(ctx, 1, 1, Changes{Known: true})
	if err != nil {
		t.Fatal(err)
	}
	if same != base {
		t.Errorf("unchanged iteration's tree = %s, want the previous one %s", same, base)
	}
	if calls := gitCalls(t, log); len(calls) != 0 {
		t.Errorf("an unchanged iteration ran git: %v", calls)
	}

	// A change, a new file, a removal: the paths, no git status.
	write(t, dir, "a.txt", "a\nmore\n")
	write(t, dir, "sub/d.txt", "d\n")
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".ralph/logs/x.log", "private\n")
	two, err := r.SaveIteration(ctx, 1, 2, Changes{Known: true, Paths: []string{"a.txt", "b.txt", "sub/d.txt", ".ralph/logs/x.log"}})
	if err != nil {
		t.Fatal(err)
	}
	r.pendingTrees.wait(r) // the trees are written in the background
	// Built from the trees on the paths: the private index, whose size
	// is the whole tree's, is neither read nor written; the trees are
	// written as loose objects, no mktree.
	if calls := gitCalls(t, log); slices.ContainsFunc(calls, readsTree) || slices.Contains(calls, "mktree") || !slices.Contains(calls, "hash-object") {
		t.Errorf("a known change ran %v, want its trees built without the index", calls)
	}
	full, err := r.SaveIteration(ctx, 1, 3, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	// The same files, ralph's bookkeeping aside (iteration.txt changed
	// in an iteration that reported nothing: its diffs leave it out).
	if st, err := r.StatTrees(ctx, two, full); err != nil || st.Files != 0 {
		t.Errorf("tree from the changed paths differs from a full read's: %+v %v", st, err)
	}
	if calls := gitCalls(t, log); !slices.Contains(calls, "status") {
		t.Errorf("an unknown change ran %v, want a git status", calls)
	}

	// A directory among the paths: git refuses it, the whole tree is read.
	write(t, dir, "new/e.txt", "e\n")
	four, err := r.SaveIteration(ctx, 1, 4, Changes{Known: true, Paths: []string{"new"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := treeFiles(t, dir, four); !slices.Contains(got, "new/e.txt") || slices.Contains(got, "b.txt") || slices.Contains(got, ".ralph/logs/x.log") {
		t.Errorf("tree after a new directory holds %v", got)
	}
	gitCalls(t, log)

	// A file of a repository inside the tree: git records the repository
	// as one entry (a gitlink), as a full read does.
	write(t, dir, "nest/x.txt", "x\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "x.txt"}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join(dir, "nest")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := r.SaveIteration(ctx, 1, 5, Changes{}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "nest/x.txt", "x changed\n")
	nested, err := r.SaveIteration(ctx, 1, 6, Changes{Known: true, Paths: []string{"nest/x.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := treeFiles(t, dir, nested); slices.Contains(got, "nest/x.txt") || !slices.Contains(got, "nest") {
		t.Errorf("tree after a change inside a nested repository holds %v, want the repository as one entry", got)
	}
	gitCalls(t, log)

	// The dashboard's diffs: the change, then nothing.
	st, err := r.StatTrees(ctx, same, two)
	if err != nil || st.Files != 3 || st.Added != 2 || st.Deleted != 1 {
		t.Errorf("diff of the changed iteration = %+v %v, want 3 files +2 -1", st, err)
	}
	st, err = r.StatTrees(ctx, base, same)
	if err != nil || st.Files != 0 {
		t.Errorf("diff of the unchanged iteration = %+v %v, want none", st, err)
	}

	// The chain: nothing written yet, every iteration once flushed.
	if calls := gitCalls(t, log); slices.Contains(calls, "commit-tree") || slices.Contains(calls, "update-ref") {
		t.Errorf("the chain was written before the flush: %v", calls)
	}
	if err := r.FlushIterations(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", dir, "log", "--format=%T %s", IterationRefPrefix+"task-1").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s task 1 iteration 6\n%s task 1 iteration 5\n%s task 1 iteration 4\n%s task 1 iteration 3\n%s task 1 iteration 2\n%s task 1 iteration 1\n%s task 1 iteration 0\n", nested, nested, four, full, two, same, base)
	if string(out) != want {
		t.Errorf("chain =\n%s\nwant\n%s", out, want)
	}
}

// treeFiles lists the files of tree.
func treeFiles(t *testing.T, dir, tree string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", tree).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}

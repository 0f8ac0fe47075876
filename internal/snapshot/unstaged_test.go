package snapshot

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/gitindex"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// indexEntry returns the private index's blob id for rel, "" when it
// has none.
func indexEntry(t *testing.T, r *Repo, rel string) string {
	t.Helper()
	f, err := gitindex.ReadWhole(r.index, r.gitDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries {
		if e.Path == rel {
			return hex.EncodeToString(e.ID[:])
		}
	}
	return ""
}

// A whole read that finds a few files changed builds its tree from the
// index's own and leaves the index alone: no git reads or writes the
// whole index but git status. The tree is the one git add -A gives; the
// files stay unstaged, and say so (Unstaged), until a read finds more
// than maxUnstaged, which stages them all. A rollback, which needs the
// index to be the working tree, stages them first.
func TestWholeReadLeavesAFewFilesUnstaged(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "src/b.go", "b\n")
	write(t, dir, "run.sh", "#!/bin/sh\n")
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "start")
	r := open(t, dir)
	saved := tree(t, dir)
	first, err := r.Save(ctx, TaskPre(1), "first")
	if err != nil {
		t.Fatal(err)
	}
	oldA := indexEntry(t, r, "a.txt")
	log := testutil.LogGit(t)

	write(t, dir, "a.txt", "a changed\n")
	write(t, dir, "new.txt", "new\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	remove(t, dir, "link")
	if err := os.Symlink("src/b.go", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	s, err := r.Save(ctx, TaskPost(1), "few")
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range gitCalls(t, log) {
		if sub == "add" || sub == "update-index" || sub == "write-tree" {
			t.Errorf("a read of four changed files ran git %s", sub)
		}
	}
	if want := referenceTree(t, dir); s.Tree != want {
		t.Errorf("tree %s, git add -A gives %s: %v", s.Tree, want, treeFiles(t, dir, s.Tree))
	}
	want := []string{"a.txt", "link", "new.txt", "run.sh"}
	if got := r.Unstaged(); !slices.Equal(got, want) {
		t.Errorf("Unstaged() = %v, want %v", got, want)
	}
	if got := indexEntry(t, r, "a.txt"); got != oldA {
		t.Errorf("the private index's a.txt is %s, want it left as %s", got, oldA)
	}

	// The next read builds on the same index: what the last left
	// unstaged is named again, with what changed since.
	write(t, dir, "src/b.go", "b changed\n")
	s, err = r.Save(ctx, TaskPre(2), "again")
	if err != nil {
		t.Fatal(err)
	}
	if want := referenceTree(t, dir); s.Tree != want {
		t.Errorf("second tree %s, git add -A gives %s", s.Tree, want)
	}
	if got := r.Unstaged(); !slices.Equal(got, append(want, "src/b.go")) {
		t.Errorf("Unstaged() = %v, want %v and src/b.go", got, want)
	}
	gitCalls(t, log)

	// More than maxUnstaged: all of them staged.
	for i := range maxUnstaged {
		write(t, dir, fmt.Sprintf("many/f%d.txt", i), "f\n")
	}
	userGit(t, dir, "add", "many") // tracked by the user: not a new directory
	s, err = r.Save(ctx, TaskPost(2), "many")
	if err != nil {
		t.Fatal(err)
	}
	if calls := gitCalls(t, log); !slices.Contains(calls, "write-tree") {
		t.Errorf("a read of %d changed files ran %v, want them staged", maxUnstaged+1, calls)
	}
	if want := referenceTree(t, dir); s.Tree != want {
		t.Errorf("tree after many %s, git add -A gives %s", s.Tree, want)
	}
	if got := r.Unstaged(); got != nil {
		t.Errorf("Unstaged() = %v after all were staged", got)
	}
	if blob := userGit(t, dir, "hash-object", "a.txt"); indexEntry(t, r, "a.txt")+"\n" != blob {
		t.Errorf("a.txt not staged")
	}

	// One file larger than maxUnstagedBytes: staged, so git status
	// does not read it again on every read.
	write(t, dir, "big.bin", strings.Repeat("x", maxUnstagedBytes+1))
	gitCalls(t, log)
	if _, err := r.Save(ctx, Manual(r.now()), ""); err != nil {
		t.Fatal(err)
	}
	if calls := gitCalls(t, log); !slices.Contains(calls, "write-tree") || r.Unstaged() != nil {
		t.Errorf("a read of a file of %d bytes ran %v and left %v unstaged, want it staged", maxUnstagedBytes+1, calls, r.Unstaged())
	}

	// A rollback from a tree left partly unstaged.
	write(t, dir, "a.txt", "a once more\n")
	if _, err := r.Save(ctx, Manual(r.now()), ""); err != nil {
		t.Fatal(err)
	}
	if len(r.Unstaged()) != 1 {
		t.Fatalf("Unstaged() = %v, want a.txt", r.Unstaged())
	}
	if _, err := r.Rollback(ctx, first.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rolling back to the first", tree(t, dir), saved)
}

// Resolving a snapshot reads its own ref, not every snapshot's commit
// (hundreds, after a few days' tasks); an unknown name still lists the
// names there are.
func TestResolveReadsItsOwnRef(t *testing.T) {
	ctx := context.Background()
	dir, r, _, _ := savedRepo(t, "a.txt", "a\n")
	for i := 2; i <= 12; i++ {
		write(t, dir, "a.txt", fmt.Sprintf("a %d\n", i))
		if _, err := r.Save(ctx, TaskPre(i), ""); err != nil {
			t.Fatal(err)
		}
	}
	log := testutil.LogGit(t)
	s, err := r.Resolve(ctx, TaskPre(1))
	if err != nil || s.Name != TaskPre(1) || s.Task != 1 || s.Tree == "" {
		t.Fatalf("Resolve = %+v, %v", s, err)
	}
	b, _ := os.ReadFile(log)
	if want := RefPrefix + TaskPre(1) + "\n"; !strings.HasSuffix(string(b), want) {
		t.Errorf("Resolve ran %q, want a for-each-ref of %s alone", b, RefPrefix+TaskPre(1))
	}
	_, err = r.Resolve(ctx, TaskPre(13))
	var ue *UnknownSnapshotError
	if !errors.As(err, &ue) || len(ue.Valid) != 12 {
		t.Errorf("Resolve of an unknown name = %v, want an UnknownSnapshotError naming the 12 there are", err)
	}
}

// The tree the private index was last written as may be one nothing
// reaches (a whole read that staged, never committed: ralph snapshot
// status after a removal), which git gc prunes. A whole read does not
// take it, as git write-tree does not: the snapshot is the tree as it
// is, with or without a change since, and the repository stays whole.
func TestWholeReadOfAnIndexTreeGitLost(t *testing.T) {
	ctx := context.Background()
	for _, change := range []bool{false, true} {
		t.Run(fmt.Sprintf("a change since %v", change), func(t *testing.T) {
			dir := newRepo(t)
			write(t, dir, "a.txt", "a\n")
			write(t, dir, "b.txt", "b\n")
			write(t, dir, "c.txt", "c\n") // unchanged throughout: only the base holds it
			userGit(t, dir, "add", "-A")
			userGit(t, dir, "commit", "-q", "-m", "start")
			r := open(t, dir)
			if _, err := r.Save(ctx, TaskPre(1), ""); err != nil {
				t.Fatal(err)
			}
			remove(t, dir, "b.txt") // staged: the index's own tree, never committed
			if _, err := r.Status(ctx); err != nil {
				t.Fatal(err)
			}
			lost := r.treeOfIndex(ctx, true)
			if lost == "" {
				t.Fatal("the index knows no tree of its own")
			}
			userGit(t, dir, "gc", "-q", "--prune=now")
			if r.treeOfIndex(ctx, true) != "" {
				t.Fatalf("treeOfIndex still gives %s after git pruned it", lost)
			}
			if change {
				write(t, dir, "a.txt", "a changed\n")
			}
			s, err := r.Save(ctx, TaskPre(2), "")
			if err != nil {
				t.Fatalf("Save after git pruned the index's tree: %v", err)
			}
			if want := referenceTree(t, dir); s.Tree != want {
				t.Errorf("tree %s, git add -A gives %s", s.Tree, want)
			}
			it, err := r.SaveIteration(ctx, 2, 0, Changes{})
			if err != nil || it != s.Tree {
				t.Errorf("SaveIteration = %s, %v; want %s", it, err, s.Tree)
			}
			if err := r.FlushIterations(); err != nil {
				t.Fatal(err)
			}
			userGit(t, dir, "fsck", "--no-dangling", "--strict")
		})
	}
}

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

// The chain's commits are written without starting git, and are the very
// commits `git commit-tree` writes: same bytes, same ids, objects git's
// fsck accepts, files as git leaves them. A burst of iterations moves the
// chain's ref with one update-ref.
func TestChainCommitsWrittenAsGitWould(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.commits.delay = time.Hour // written on FlushIterations only
	if _, err := r.SaveIteration(ctx, 1, 0, Changes{}); err != nil {
		t.Fatal(err)
	}
	log := testutil.LogGit(t)
	for n := 1; n <= 5; n++ {
		write(t, dir, "a.txt", fmt.Sprintf("a\n%d\n", n))
		if _, err := r.SaveIteration(ctx, 1, n, Changes{Known: true, Paths: []string{"a.txt"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.FlushIterations(); err != nil {
		t.Fatal(err)
	}
	calls := gitCalls(t, log)
	if slices.Contains(calls, "commit-tree") {
		t.Errorf("the chain's commits ran git commit-tree: %v", calls)
	}
	if n := countOf(calls, "update-ref"); n != 1 {
		t.Errorf("five iterations moved the chain's ref %d times, want once: %v", n, calls)
	}

	ref := IterationRefPrefix + "task-1"
	commits := strings.Fields(userGit(t, dir, "rev-list", "--reverse", ref))
	if len(commits) != 6 {
		t.Fatalf("chain holds %d commits, want 6", len(commits))
	}
	out, err := exec.Command("git", "-C", dir, "fsck", "--strict", "--no-dangling").CombinedOutput()
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "notice:") { // the unborn branch
			err = fmt.Errorf("%v: %s", err, line)
		}
	}
	if err != nil {
		t.Errorf("git fsck: %v", err)
	}
	parent := ""
	for i, c := range commits {
		tree := strings.TrimSpace(userGit(t, dir, "rev-parse", c+"^{tree}"))
		date := strings.TrimSpace(userGit(t, dir, "log", "-1", "--format=%ct", c)) + " +0000"
		args := []string{"-C", dir, "commit-tree", "--no-gpg-sign", tree, "-m", fmt.Sprintf("task 1 iteration %d", i)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=ralph", "GIT_AUTHOR_EMAIL=ralph@localhost",
			"GIT_COMMITTER_NAME=ralph", "GIT_COMMITTER_EMAIL=ralph@localhost",
			"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git commit-tree: %v", err)
		}
		if want := strings.TrimSpace(string(out)); c != want {
			t.Errorf("iteration %d's commit is %s, git commit-tree writes %s", i, c, want)
		}
		parent = c
	}
	tip := commits[len(commits)-1]
	fi, err := os.Stat(filepath.Join(dir, ".git", "objects", tip[:2], tip[2:]))
	if err != nil {
		t.Fatalf("the tip is not a loose object: %v", err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("the tip's object file has mode %v, want git's read-only 0444", fi.Mode().Perm())
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "*", "tmp_obj_*"))
	if len(tmps) > 0 {
		t.Errorf("temporary objects left: %v", tmps)
	}
}

// Where git would write the objects differently (SHA-256 ids, a
// repository shared between users), ralph leaves the commits to git and
// the chain is as whole.
func TestChainCommitsLeftToGit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		init []string
	}{
		{"sha256", []string{"init", "-q", "--object-format=sha256"}},
		{"shared", []string{"init", "-q", "--shared=group"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			userGit(t, dir, tc.init...)
			write(t, dir, "a.txt", "a\n")
			r, err := Open(ctx, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.looseObjects(ctx); got != "" {
				t.Errorf("looseObjects = %q, want git to write them", got)
			}
			if _, err := r.SaveIteration(ctx, 1, 0, Changes{}); err != nil {
				t.Fatal(err)
			}
			write(t, dir, "a.txt", "b\n")
			if _, err := r.SaveIteration(ctx, 1, 1, Changes{}); err != nil {
				t.Fatal(err)
			}
			if err := r.FlushIterations(); err != nil {
				t.Fatal(err)
			}
			if n := strings.TrimSpace(userGit(t, dir, "rev-list", "--count", IterationRefPrefix+"task-1")); n != "2" {
				t.Errorf("chain holds %s commits, want 2", n)
			}
		})
	}
	// A plain repository: its own object directory.
	dir := newRepo(t)
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.looseObjects(ctx), filepath.Join(dir, ".git", "objects"); got != want {
		t.Errorf("looseObjects = %q, want %q", got, want)
	}
}

func countOf(calls []string, sub string) int {
	n := 0
	for _, c := range calls {
		if c == sub {
			n++
		}
	}
	return n
}

// An iteration's trees are written after SaveIteration returns, and
// before any git of the Repo reads them: a diff of the tree just recorded
// waits for its writing, then sees it.
func TestIterationTreesWrittenBehind(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "src/a.txt", "a\n")
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.SaveIteration(ctx, 1, 0, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	r.pendingTrees.beforeWrite = func() { <-release }
	write(t, dir, "src/a.txt", "a\nb\n")
	tree, err := r.SaveIteration(ctx, 1, 1, Changes{Known: true, Paths: []string{"src/a.txt"}, Since: base})
	if err != nil {
		t.Fatal(err)
	}
	// SaveIteration returned with its trees unwritten.
	if err := exec.Command("git", "-C", dir, "cat-file", "-e", tree).Run(); err == nil {
		t.Fatal("the tree was written before SaveIteration returned")
	}
	stat := make(chan error, 1)
	go func() {
		st, err := r.StatTrees(ctx, base, tree)
		if err == nil && st.Files != 1 {
			err = fmt.Errorf("stat %+v, want one file", st)
		}
		stat <- err
	}()
	select {
	case err := <-stat:
		t.Fatalf("a diff ran before the trees were written: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-stat; err != nil {
		t.Errorf("diff of the recorded tree: %v", err)
	}
	if err := r.FlushIterations(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// TestIterationTreeWriteFailed: a background write of an iteration's
// trees that fails (here the object store is away while git writes) costs
// that iteration its commit on the chain, and FlushIterations says so;
// the next iteration, read whole, gets its commit, though its tree is the
// one the failed write was for.
func TestIterationTreeWriteFailed(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "src/a.txt", "a\n")
	r, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.SaveIteration(ctx, 1, 0, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	objects := filepath.Join(dir, ".git", "objects")
	r.pendingTrees.beforeWrite = func() {
		r.pendingTrees.beforeWrite = nil
		if err := os.Rename(objects, objects+".away"); err != nil {
			t.Error(err)
		}
	}
	write(t, dir, "src/a.txt", "a\nb\n")
	lost, err := r.SaveIteration(ctx, 1, 1, Changes{Known: true, Paths: []string{"src/a.txt"}, Since: base})
	if err != nil {
		t.Fatal(err)
	}
	r.pendingTrees.wait(r)
	if err := os.Rename(objects+".away", objects); err != nil {
		t.Fatal(err)
	}
	if err := r.FlushIterations(); err == nil {
		t.Error("FlushIterations did not report the lost tree")
	}
	// Nothing changed: a whole read gives the same tree, which git now has.
	again, err := r.SaveIteration(ctx, 1, 2, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	if again != lost {
		t.Fatalf("the whole read gave %s, not %s", again, lost)
	}
	if err := r.FlushIterations(); err != nil {
		t.Fatalf("after the whole read: %v", err)
	}
	// From then on an iteration's trees are written before it returns.
	write(t, dir, "src/a.txt", "a\nb\nc\n")
	now, err := r.SaveIteration(ctx, 1, 3, Changes{Known: true, Paths: []string{"src/a.txt"}, Since: again})
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", dir, "cat-file", "-e", now).Run(); err != nil {
		t.Errorf("after a failed write, an iteration's tree was not written before it returned: %v", err)
	}
	if err := r.FlushIterations(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", dir, "log", "--format=%s", IterationRefPrefix+"task-1").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "task 1 iteration 3\ntask 1 iteration 2\ntask 1 iteration 0" {
		t.Errorf("the chain holds %q, want iterations 3, 2 and 0", got)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

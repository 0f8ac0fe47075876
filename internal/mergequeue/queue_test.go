package mergequeue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
)

// repo makes a repository on main with file a.txt ("one\n") and returns
// its working tree.
func repo(t *testing.T) string {
	t.Helper()
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	dir := t.TempDir()
	run(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "a.txt", "one\n")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-qm", "init")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git.Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// branch makes a worktree on a new branch from main's current tip and
// commits files there.
func branch(t *testing.T, dir, name string, files map[string]string) Request {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, dir, "worktree", "add", "-q", "-b", name, wt, "main")
	for f, c := range files {
		write(t, wt, f, c)
	}
	run(t, wt, "add", "-A")
	run(t, wt, "commit", "-qm", name)
	return Request{Branch: name, Worktree: wt}
}

func subjects(t *testing.T, dir string) string {
	return run(t, dir, "log", "--format=%s", "main")
}

// A branch from main's tip lands by fast-forward; a second branch from the
// old tip is rebased and lands; the history is linear and the working tree
// follows.
func TestLandRebasesAndFastForwards(t *testing.T) {
	dir := repo(t)
	a := branch(t, dir, "ralph/spec/a", map[string]string{"b.txt": "bee\n"})
	c := branch(t, dir, "ralph/spec/c", map[string]string{"c.txt": "sea\n"})
	q := New(Options{Repo: dir, Target: "main"})
	ctx := context.Background()
	res, err := q.Land(ctx, a)
	if err != nil || res.Outcome != Landed || res.Rebased {
		t.Fatalf("a: %+v %v", res, err)
	}
	res, err = q.Land(ctx, c)
	if err != nil || res.Outcome != Landed || !res.Rebased {
		t.Fatalf("c: %+v %v", res, err)
	}
	if got := subjects(t, dir); got != "ralph/spec/c\nralph/spec/a\ninit" {
		t.Errorf("history:\n%s", got)
	}
	if merges := run(t, dir, "rev-list", "--merges", "main"); merges != "" {
		t.Errorf("merge commits: %s", merges)
	}
	if read(t, filepath.Join(dir, "c.txt")) != "sea\n" || read(t, filepath.Join(dir, "b.txt")) != "bee\n" {
		t.Error("the working tree did not follow main")
	}
	if st := run(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status after landing:\n%s", st)
	}
}

// Two branches editing the same line: the second conflicts, names the file
// and is left as it was, not mid-rebase.
func TestLandConflict(t *testing.T) {
	dir := repo(t)
	a := branch(t, dir, "ralph/spec/a", map[string]string{"a.txt": "A\n"})
	b := branch(t, dir, "ralph/spec/b", map[string]string{"a.txt": "B\n"})
	q := New(Options{Repo: dir, Target: "main"})
	ctx := context.Background()
	if res, err := q.Land(ctx, a); err != nil || res.Outcome != Landed {
		t.Fatalf("a: %+v %v", res, err)
	}
	before := run(t, b.Worktree, "rev-parse", "HEAD")
	res, err := q.Land(ctx, b)
	if err != nil || res.Outcome != Conflict {
		t.Fatalf("b: %+v %v", res, err)
	}
	if len(res.Files) != 1 || res.Files[0] != "a.txt" || !strings.Contains(res.Reason, "conflicts in a.txt") {
		t.Errorf("conflict: %+v", res)
	}
	if after := run(t, b.Worktree, "rev-parse", "HEAD"); after != before {
		t.Error("the branch moved")
	}
	if st := run(t, b.Worktree, "status", "--porcelain"); st != "" {
		t.Errorf("worktree left dirty:\n%s", st)
	}
	if got := subjects(t, dir); got != "ralph/spec/a\ninit" {
		t.Errorf("history:\n%s", got)
	}
}

// The gates run on the rebased result; their failure is a conflict with
// the gates' words, and main does not move.
func TestLandGateFailureAfterRebase(t *testing.T) {
	dir := repo(t)
	a := branch(t, dir, "ralph/spec/a", map[string]string{"b.txt": "bee\n"})
	c := branch(t, dir, "ralph/spec/c", map[string]string{"c.txt": "sea\n"})
	var ran []string
	q := New(Options{Repo: dir, Target: "main", Gates: func(_ context.Context, wt string) (string, error) {
		ran = append(ran, wt)
		if _, err := os.Stat(filepath.Join(wt, "b.txt")); err == nil {
			return "tests: b.txt and c.txt disagree", nil
		}
		return "", nil
	}})
	ctx := context.Background()
	if res, err := q.Land(ctx, a); err != nil || res.Outcome != Landed {
		t.Fatalf("a: %+v %v", res, err)
	}
	if len(ran) != 0 {
		t.Errorf("gates ran on a branch that needed no rebase: %v", ran)
	}
	res, err := q.Land(ctx, c)
	if err != nil || res.Outcome != Conflict || !res.Rebased || !strings.Contains(res.Reason, "b.txt and c.txt disagree") {
		t.Fatalf("c: %+v %v", res, err)
	}
	if got := subjects(t, dir); got != "ralph/spec/a\ninit" {
		t.Errorf("history:\n%s", got)
	}
}

// The user's uncommitted, staged and untracked changes survive a landing
// byte for byte when they do not overlap it; when they do, the landing
// waits, says so, and lands once the user commits.
func TestLandKeepsUserChanges(t *testing.T) {
	dir := repo(t)
	write(t, dir, "notes.txt", "mine\n")
	run(t, dir, "add", "notes.txt")
	run(t, dir, "commit", "-qm", "notes")
	a := branch(t, dir, "ralph/spec/a", map[string]string{"b.txt": "bee\n"})
	b := branch(t, dir, "ralph/spec/b", map[string]string{"a.txt": "B\n"})
	write(t, dir, "notes.txt", "mine, edited\r\nno newline")
	write(t, dir, "staged.txt", "staged\n")
	run(t, dir, "add", "staged.txt")
	write(t, dir, "scratch/untracked.bin", "\x00\x01raw")
	status := run(t, dir, "status", "--porcelain")

	var mu sync.Mutex
	var said []string
	q := New(Options{Repo: dir, Target: "main", Wait: 10 * time.Millisecond, Say: func(l string) {
		mu.Lock()
		said = append(said, l)
		mu.Unlock()
	}})
	ctx := context.Background()
	if res, err := q.Land(ctx, a); err != nil || res.Outcome != Landed {
		t.Fatalf("a: %+v %v", res, err)
	}
	if got := run(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("status after landing:\n%s\nwant:\n%s", got, status)
	}
	if read(t, filepath.Join(dir, "notes.txt")) != "mine, edited\r\nno newline" || read(t, filepath.Join(dir, "scratch/untracked.bin")) != "\x00\x01raw" || read(t, filepath.Join(dir, "staged.txt")) != "staged\n" {
		t.Error("the user's changes changed")
	}
	if read(t, filepath.Join(dir, "b.txt")) != "bee\n" {
		t.Error("the landed file is missing")
	}

	// The user edits a.txt, which b changes: b waits.
	write(t, dir, "a.txt", "user's\n")
	done := make(chan Result, 1)
	go func() {
		res, err := q.Land(ctx, b)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		n := len(said)
		mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the landing never said it waits")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if read(t, filepath.Join(dir, "a.txt")) != "user's\n" {
		t.Fatal("the waiting landing overwrote the user's edit")
	}
	mu.Lock()
	if !strings.Contains(said[0], "waiting to land on main") || !strings.Contains(said[0], "a.txt") {
		t.Errorf("said %q", said[0])
	}
	mu.Unlock()
	run(t, dir, "checkout", "--", "a.txt") // the user gives up the edit
	res := <-done
	if res.Outcome != Landed || read(t, filepath.Join(dir, "a.txt")) != "B\n" {
		t.Errorf("b: %+v", res)
	}
}

// Landings happen one at a time, in the order they were asked for.
func TestLandOrder(t *testing.T) {
	dir := repo(t)
	var reqs []Request
	for _, n := range []string{"x1", "x2", "x3", "x4"} {
		reqs = append(reqs, branch(t, dir, "ralph/spec/"+n, map[string]string{n + ".txt": n}))
	}
	gate := make(chan struct{})
	first := true
	q := New(Options{Repo: dir, Target: "main", Gates: func(context.Context, string) (string, error) {
		if first {
			first = false
			<-gate
		}
		return "", nil
	}})
	ctx := context.Background()
	if res, err := q.Land(ctx, reqs[0]); err != nil || res.Outcome != Landed {
		t.Fatal(res, err)
	}
	var wg sync.WaitGroup
	results := make(chan string, 3)
	for _, r := range reqs[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := q.Land(ctx, r); err != nil || res.Outcome != Landed {
				t.Error(r.Branch, res, err)
			}
			results <- r.Branch
		}()
		// Wait until this request holds the turn or a ticket.
		for {
			q.mu.Lock()
			n := len(q.waiting)
			busy := q.busy
			q.mu.Unlock()
			if busy && n == 0 && r == reqs[1] || n > 0 && r != reqs[1] && n == indexOf(reqs, r)-1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(gate)
	wg.Wait()
	close(results)
	if got := subjects(t, dir); got != "ralph/spec/x4\nralph/spec/x3\nralph/spec/x2\nralph/spec/x1\ninit" {
		t.Errorf("history:\n%s", got)
	}
}

func indexOf(reqs []Request, r Request) int {
	for i, x := range reqs {
		if x == r {
			return i
		}
	}
	return -1
}

// A landing killed inside its merge leaves the commit's files written and
// HEAD where it was: the next landing finds them the commit's own, byte
// for byte, and lands. A file the user changed is never taken for one.
func TestLandAfterAKilledMerge(t *testing.T) {
	dir := repo(t)
	a := branch(t, dir, "ralph/spec/a", map[string]string{"a.txt": "A\n", "b.txt": "bee\n"})
	// What the killed merge wrote: a changed file and a new one.
	write(t, dir, "a.txt", "A\n")
	write(t, dir, "b.txt", "bee\n")
	q := New(Options{Repo: dir, Target: "main", Wait: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := q.Land(ctx, a)
	if err != nil || res.Outcome != Landed {
		t.Fatalf("after a killed merge: %+v %v", res, err)
	}
	if got := subjects(t, dir); got != "ralph/spec/a\ninit" {
		t.Errorf("history:\n%s", got)
	}
	if st := run(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status after landing:\n%s", st)
	}

	// The user's own edit of a file the next landing changes: it waits.
	c := branch(t, dir, "ralph/spec/c", map[string]string{"a.txt": "C\n"})
	write(t, dir, "a.txt", "user's\n")
	wait, stop := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer stop()
	if res, err := q.Land(wait, c); err == nil && res.Outcome == Landed {
		t.Fatal("landed over the user's edit")
	}
	if read(t, filepath.Join(dir, "a.txt")) != "user's\n" {
		t.Error("the user's edit was overwritten")
	}
}

// A landing whose ralph was killed with its process group inside the
// merge left the user's index.lock: the landing mark it wrote says so,
// and the next landing removes the lock (no git runs there) and lands.
// Without a mark, a lock in the user's repository is never touched.
func TestLandAfterAMergeKilledHoldingTheIndexLock(t *testing.T) {
	for _, marked := range []bool{true, false} {
		t.Run(fmt.Sprintf("marked %v", marked), func(t *testing.T) {
			dir := repo(t)
			a := branch(t, dir, "ralph/spec/a", map[string]string{"a.txt": "A\n"})
			started := time.Now().Add(-time.Minute)
			if marked {
				mark := filepath.Join(dir, ".git", "ralph", "landing")
				os.MkdirAll(filepath.Dir(mark), 0o755)
				os.WriteFile(mark, nil, 0o644)
				os.Chtimes(mark, started, started)
			}
			lock := filepath.Join(dir, ".git", "index.lock")
			os.WriteFile(lock, nil, 0o644)
			held := started.Add(time.Second) // the killed merge's
			os.Chtimes(lock, held, held)
			q := New(Options{Repo: dir, Target: "main", Wait: 10 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := q.Land(ctx, a)
			if !marked || !git.CanTellRunningGits() {
				if err == nil || !strings.Contains(err.Error(), "index.lock") {
					t.Fatalf("without a landing mark: %+v %v, want the lock's error", res, err)
				}
				if _, serr := os.Stat(lock); serr != nil {
					t.Error("the user's index.lock was removed without a landing mark")
				}
				return
			}
			if err != nil || res.Outcome != Landed {
				t.Fatalf("after a merge killed holding the index lock: %+v %v", res, err)
			}
			if got := subjects(t, dir); got != "ralph/spec/a\ninit" {
				t.Errorf("history:\n%s", got)
			}
			if _, serr := os.Stat(filepath.Join(dir, ".git", "ralph", "landing")); serr == nil {
				t.Error("the landing mark is still there after the landing")
			}
		})
	}
}

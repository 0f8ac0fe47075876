package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/filelock"
	"github.com/ralph-harness/ralph/internal/git"
)

func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
	} {
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo is a repository on main with one commit; it returns the
// repository and that commit.
func newRepo(t *testing.T) (string, string) {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	run(t, t.TempDir(), "init", "-q", "-b", "main", repo)
	write(t, filepath.Join(repo, "a.txt"), "one\n")
	run(t, repo, "add", "-A")
	run(t, repo, "commit", "-qm", "init")
	return repo, run(t, repo, "rev-parse", "HEAD")
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// registered lists the paths of the repository's linked worktrees, as
// git records them.
func registered(t *testing.T, repo string) []string {
	t.Helper()
	var paths []string
	for i, l := range strings.Split(run(t, repo, "worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok && i > 0 {
			paths = append(paths, p)
		}
	}
	return paths
}

func mustEnsure(t *testing.T, repo, dir string, o Options) Result {
	t.Helper()
	res, err := Ensure(context.Background(), repo, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A new branch starts at Start; an existing one is checked out as it is;
// a missing branch with no start is an error.
func TestEnsureCreates(t *testing.T) {
	ctx := context.Background()
	repo, start := newRepo(t)
	write(t, filepath.Join(repo, "a.txt"), "two\n")
	run(t, repo, "commit", "-qam", "second")

	dir := filepath.Join(repo, ".ralph", "worktrees", "task-1")
	if res := mustEnsure(t, repo, dir, Options{Branch: "ralph/task/1", Start: start}); res.Outcome != Created || res.Freed != "" {
		t.Fatalf("result = %+v, want created", res)
	}
	if got := run(t, dir, "rev-parse", "HEAD"); got != start {
		t.Errorf("new branch at %s, want the start %s", got, start)
	}
	if got := run(t, dir, "symbolic-ref", "--short", "HEAD"); got != "ralph/task/1" {
		t.Errorf("worktree on %s, want ralph/task/1", got)
	}

	run(t, repo, "branch", "ralph/task/2", "main")
	other := filepath.Join(repo, ".ralph", "worktrees", "task-2")
	mustEnsure(t, repo, other, Options{Branch: "ralph/task/2", Start: start})
	if got, want := run(t, other, "rev-parse", "HEAD"), run(t, repo, "rev-parse", "main"); got != want {
		t.Errorf("existing branch checked out at %s, want its tip %s (Start is for new branches)", got, want)
	}

	_, err := Ensure(ctx, repo, filepath.Join(repo, "x"), Options{Branch: "nope"})
	if err == nil || !strings.Contains(err.Error(), "no branch nope") {
		t.Errorf("missing branch, no start: err = %v", err)
	}
}

// A whole worktree is used as it is, the work in it kept.
func TestEnsureReuses(t *testing.T) {
	repo, start := newRepo(t)
	dir := filepath.Join(t.TempDir(), "wt")
	mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
	write(t, filepath.Join(dir, "work.txt"), "in progress\n")
	if res := mustEnsure(t, repo, dir, Options{Branch: "b", Start: start}); res.Outcome != Reused {
		t.Fatalf("outcome = %v, want reused", res.Outcome)
	}
	if !exists(filepath.Join(dir, "work.txt")) {
		t.Error("reusing the worktree lost the work in it")
	}
}

// What a killed git worktree add, or a deleted record, leaves is made
// again, on the same branch.
func TestEnsureRecoversHalfMade(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, repo, dir, admin string)
	}{
		{"locked initializing", func(t *testing.T, repo, dir, admin string) {
			write(t, filepath.Join(admin, "locked"), "initializing\n")
		}},
		{"no HEAD yet", func(t *testing.T, repo, dir, admin string) {
			write(t, filepath.Join(admin, "locked"), "initializing\n")
			os.Remove(filepath.Join(admin, "HEAD"))
		}},
		{"directory gone, record locked", func(t *testing.T, repo, dir, admin string) {
			write(t, filepath.Join(admin, "locked"), "initializing\n")
			os.RemoveAll(dir)
		}},
		{"record gone", func(t *testing.T, repo, dir, admin string) {
			os.RemoveAll(admin)
		}},
		{"no .git file", func(t *testing.T, repo, dir, admin string) {
			os.Remove(filepath.Join(dir, ".git"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, start := newRepo(t)
			dir := filepath.Join(t.TempDir(), "wt")
			mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
			admin, ok := adminDir(dir)
			if !ok {
				t.Fatal("no admin dir")
			}
			write(t, filepath.Join(dir, "junk.txt"), "half\n")
			tc.break_(t, repo, dir, admin)

			res := mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
			if res.Outcome != Recovered {
				t.Errorf("outcome = %v, want recovered", res.Outcome)
			}
			if exists(filepath.Join(dir, "junk.txt")) {
				t.Error("the half-made worktree's files are still there")
			}
			if got := run(t, dir, "symbolic-ref", "--short", "HEAD"); got != "b" {
				t.Errorf("on %s, want b", got)
			}
			if st := run(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("recovered worktree is not clean:\n%s", st)
			}
			if health(dir) != whole {
				t.Error("recovered worktree is not whole")
			}
		})
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A branch held by a dead worktree is freed for a new one; one held by a
// live ralph, or by the user's own worktree, is not.
func TestEnsureFreesBranchOfDeadWorktree(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hold makes the worktree at old hold branch b.
		hold func(t *testing.T, repo, old, start string)
		free bool
	}{
		{"directory deleted", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
			os.RemoveAll(old)
		}, true},
		{"directory deleted while git made it", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
			admin, _ := adminDir(old)
			write(t, filepath.Join(admin, "locked"), "initializing\n")
			os.RemoveAll(old)
		}, true},
		{"half-made", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
			admin, _ := adminDir(old)
			write(t, filepath.Join(admin, "locked"), "initializing\n")
		}, true},
		{"its ralph is gone", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
			write(t, filepath.Join(old, ".ralph", "ralph.lock"), strconv.Itoa(deadPID(t))+"\n")
		}, true},
		{"no ralph ever ran in it", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
		}, true},
		{"its ralph is alive", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
			write(t, filepath.Join(old, ".ralph", "ralph.lock"), strconv.Itoa(os.Getpid())+"\n")
		}, false},
		{"the user's worktree", func(t *testing.T, repo, old, start string) {
			run(t, repo, "worktree", "add", "-q", "-b", "b", old, start)
		}, false},
		{"locked by the user, directory gone", func(t *testing.T, repo, old, start string) {
			mustEnsure(t, repo, old, Options{Branch: "b", Start: start})
			run(t, repo, "worktree", "lock", "--reason", "on a usb stick", old)
			os.RemoveAll(old)
		}, false},
		{"the main worktree", func(t *testing.T, repo, old, start string) {
			run(t, repo, "switch", "-q", "-c", "b")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, start := newRepo(t)
			attempts := t.TempDir()
			old, dir := filepath.Join(attempts, "attempt-1"), filepath.Join(attempts, "attempt-2")
			tc.hold(t, repo, old, start)
			oldExisted := exists(old)

			for _, reset := range []bool{false, true} {
				res, err := Ensure(context.Background(), repo, dir, Options{Branch: "b", Start: start, Reset: reset})
				if !tc.free {
					if !errors.Is(err, ErrBranchHeld) {
						t.Fatalf("reset=%v: err = %v, want ErrBranchHeld", reset, err)
					}
					if exists(old) != oldExisted {
						t.Error("the live worktree was touched")
					}
					continue
				}
				if err != nil {
					t.Fatalf("reset=%v: %v", reset, err)
				}
				if got := run(t, dir, "symbolic-ref", "--short", "HEAD"); got != "b" {
					t.Errorf("reset=%v: on %s, want b", reset, got)
				}
				if exists(old) {
					t.Errorf("reset=%v: the dead worktree %s is still there", reset, old)
				}
				if !reset && oldExisted && res.Freed != old {
					t.Errorf("Freed = %q, want %s", res.Freed, old)
				}
			}
			for _, p := range registered(t, repo) {
				if p == old && tc.free {
					t.Errorf("git still records the dead worktree %s", old)
				}
			}
		})
	}
}

// Reset starts the worktree over at Start, whatever the branch and the
// worktree held.
func TestEnsureReset(t *testing.T) {
	repo, start := newRepo(t)
	dir := filepath.Join(t.TempDir(), "wt")
	mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	run(t, dir, "commit", "-qam", "on b")
	write(t, filepath.Join(dir, "untracked.txt"), "x\n")

	mustEnsure(t, repo, dir, Options{Branch: "b", Start: start, Reset: true})
	if got := run(t, dir, "rev-parse", "HEAD"); got != start {
		t.Errorf("branch at %s after reset, want %s", got, start)
	}
	if exists(filepath.Join(dir, "untracked.txt")) {
		t.Error("reset kept the old worktree's files")
	}
}

// Remove takes the worktree, git's record of it and the branch; what is
// gone already is not an error.
func TestRemove(t *testing.T) {
	ctx := context.Background()
	repo, start := newRepo(t)
	dir := filepath.Join(repo, ".ralph", "worktrees", "x")
	keep := filepath.Join(repo, ".ralph", "worktrees", "keep")
	mustEnsure(t, repo, dir, Options{Branch: "x", Start: start})
	mustEnsure(t, repo, keep, Options{Branch: "keep", Start: start})
	write(t, filepath.Join(dir, "dirty.txt"), "uncommitted\n")
	write(t, filepath.Join(keep, "dirty.txt"), "uncommitted\n")

	if err := Remove(ctx, repo, dir, "x"); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Error("the worktree's directory is still there")
	}
	if reg := registered(t, repo); len(reg) != 1 || !samePath(reg[0], keep) {
		t.Errorf("registered worktrees = %v, want only %s", reg, keep)
	}
	if out := run(t, repo, "branch", "--list", "x"); out != "" {
		t.Errorf("branch x is still there: %s", out)
	}
	if err := Remove(ctx, repo, dir, "x"); err != nil {
		t.Errorf("removing again: %v", err)
	}
	// Without a branch, the branch stays.
	if err := Remove(ctx, repo, keep, ""); err != nil {
		t.Fatal(err)
	}
	if out := run(t, repo, "branch", "--list", "keep"); out == "" {
		t.Error("Remove without a branch deleted the branch")
	}
	// A directory that is not a worktree goes too.
	write(t, filepath.Join(dir, "stray.txt"), "x")
	if err := Remove(ctx, repo, dir, ""); err != nil || exists(dir) {
		t.Errorf("stray directory: err = %v, still there = %v", err, exists(dir))
	}
}

// Prune drops the records of worktrees whose directory is gone, and only
// those.
func TestPrune(t *testing.T) {
	repo, start := newRepo(t)
	gone, kept := filepath.Join(t.TempDir(), "gone"), filepath.Join(t.TempDir(), "kept")
	mustEnsure(t, repo, gone, Options{Branch: "gone", Start: start})
	mustEnsure(t, repo, kept, Options{Branch: "kept", Start: start})
	os.RemoveAll(gone)
	if err := Prune(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	if reg := registered(t, repo); len(reg) != 1 || !samePath(reg[0], kept) {
		t.Errorf("registered worktrees = %v, want only %s", reg, kept)
	}
	// Its branch is free again.
	mustEnsure(t, repo, filepath.Join(t.TempDir(), "again"), Options{Branch: "gone"})
}

// CheckedOut finds where a branch is checked out, the main worktree too.
func TestCheckedOut(t *testing.T) {
	ctx := context.Background()
	repo, start := newRepo(t)
	dir := filepath.Join(t.TempDir(), "wt")
	mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
	for branch, want := range map[string]string{"main": repo, "b": dir, "none": ""} {
		got, err := CheckedOut(ctx, dir, branch)
		if err != nil {
			t.Fatal(err)
		}
		if (want == "") != (got == "") || want != "" && !samePath(got, want) {
			t.Errorf("CheckedOut(%s) = %q, want %q", branch, got, want)
		}
	}
}

// Worktrees made at once, from one process or several callers, all come
// out whole; callers asking for the same one share it.
func TestConcurrentEnsure(t *testing.T) {
	repo, start := newRepo(t)
	root := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, 2*n)
	outcomes := make([]Outcome, 2*n)
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half make their own worktree, half all ask for "shared".
			name := fmt.Sprintf("wt-%d", i)
			if i >= n {
				name = "shared"
			}
			res, err := Ensure(context.Background(), repo, filepath.Join(root, name), Options{Branch: name, Start: start})
			errs[i], outcomes[i] = err, res.Outcome
		}()
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
		if i >= n && outcomes[i] == Created {
			created++
		}
	}
	if created != 1 {
		t.Errorf("the shared worktree was created %d times, want once", created)
	}
	if reg := registered(t, repo); len(reg) != n+1 {
		t.Errorf("%d worktrees registered, want %d: %v", len(reg), n+1, reg)
	}
	for i := range n {
		if health(filepath.Join(root, fmt.Sprintf("wt-%d", i))) != whole {
			t.Errorf("wt-%d is not whole", i)
		}
	}
}

// Another process holding the repository's worktree lock keeps Ensure
// waiting until it lets go, or until the caller gives up.
func TestEnsureWaitsForAnotherProcess(t *testing.T) {
	repo, start := newRepo(t)
	lockPath := filepath.Join(repo, ".git", "ralph", "worktrees.lock")
	write(t, lockPath, "")
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := filelock.TryLock(f); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "wt")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := Ensure(ctx, repo, dir, Options{Branch: "b", Start: start}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v while another process holds the lock, want the deadline", err)
	}
	if exists(dir) {
		t.Fatal("Ensure made the worktree without the lock")
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		filelock.Unlock(f)
	}()
	if res := mustEnsure(t, repo, dir, Options{Branch: "b", Start: start}); res.Outcome != Created {
		t.Errorf("outcome = %v after the lock came free, want created", res.Outcome)
	}
}

// A wrong path never costs the user a clone: the repository itself, a
// folder that holds it, or another repository is refused, not deleted.
func TestNeverDeletesARepository(t *testing.T) {
	ctx := context.Background()
	repo, start := newRepo(t)
	other, _ := newRepo(t)
	for _, dir := range []string{repo, filepath.Dir(repo), other} {
		if err := Remove(ctx, repo, dir, ""); err == nil {
			t.Errorf("Remove(%s) deleted it", dir)
		}
		if _, err := Ensure(ctx, repo, dir, Options{Branch: "x", Start: start, Reset: true}); err == nil {
			t.Errorf("Ensure(%s, Reset) replaced it", dir)
		}
	}
	for _, path := range []string{filepath.Join(repo, "a.txt"), filepath.Join(other, "a.txt")} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s is gone: %v", path, err)
		}
	}
}

// killedAdd leaves what a `git worktree add` of dir killed at that
// moment leaves: git 2.39 makes the record worktrees/<base of dir>/,
// then writes its locked, the record's gitdir, the worktree's .git file,
// HEAD and commondir, in that order (builtin/worktree.c, add_worktree).
// done is how many of those six steps were over; with torn, git was
// killed in the next one, after it made the file and before it wrote to
// it. It returns the record.
func killedAdd(t *testing.T, repo, dir string, done int, torn bool) string {
	t.Helper()
	admin := filepath.Join(repo, ".git", "worktrees", filepath.Base(dir))
	steps := []func(content bool){
		func(bool) {
			if err := os.MkdirAll(admin, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		func(c bool) { writeIf(t, filepath.Join(admin, "locked"), "initializing\n", c) },
		func(c bool) { writeIf(t, filepath.Join(admin, "gitdir"), filepath.Join(dir, ".git")+"\n", c) },
		func(c bool) { writeIf(t, filepath.Join(dir, ".git"), "gitdir: "+admin+"\n", c) },
		func(c bool) { writeIf(t, filepath.Join(admin, "HEAD"), strings.Repeat("0", 40)+"\n", c) },
		func(c bool) { writeIf(t, filepath.Join(admin, "commondir"), "../..\n", c) },
	}
	for _, step := range steps[:done] {
		step(true)
	}
	if torn {
		steps[done](false)
	}
	return admin
}

// writeIf writes content to path, or leaves the file empty when not c.
func writeIf(t *testing.T, path, content string, c bool) {
	t.Helper()
	if !c {
		content = ""
	}
	write(t, path, content)
}

// records lists the names of the repository's worktree records.
func records(t *testing.T, repo string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// What a `git worktree add` killed before it wrote commondir leaves is
// cleared, and the worktree made at its own name: an empty commondir
// makes every git worktree command die (the crash campaign's "failed to
// read .git/worktrees/task-1/commondir"), and a record with no gitdir git
// neither lists nor prunes (it is locked).
func TestEnsureClearsRecordAKilledAddLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		// done and torn say where the add was killed (killedAdd).
		done int
		torn bool
		// other makes the record for another worktree than the one
		// Ensure makes.
		other bool
		// git is what git worktree list does with the record: "unlisted",
		// "dies" or "listed".
		git string
	}{
		{"record made, nothing in it", 1, false, false, "unlisted"},
		{"locked written empty", 1, true, false, "unlisted"},
		{"locked", 2, false, false, "unlisted"},
		{"gitdir written empty", 2, true, false, "unlisted"},
		{"commondir written empty", 5, true, false, "dies"},
		{"commondir written empty, for another worktree", 5, true, true, "dies"},
		{"no commondir yet", 5, false, false, "listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, start := newRepo(t)
			// git worktree add -b makes the branch before the worktree.
			run(t, repo, "branch", "b", start)
			dir := filepath.Join(repo, ".ralph", "worktrees", "task-1")
			killed := dir
			if tc.other {
				killed = filepath.Join(repo, ".ralph", "worktrees", "task-2")
			}
			killedAdd(t, repo, killed, tc.done, tc.torn)

			cmd := exec.Command("git", "worktree", "list", "--porcelain")
			cmd.Dir = repo
			out, err := cmd.CombinedOutput()
			got := "unlisted"
			switch {
			case err != nil && strings.Contains(string(out), "failed to read"):
				got = "dies"
			case err != nil:
				t.Fatalf("git worktree list: %v\n%s", err, out)
			case len(registered(t, repo)) > 0:
				got = "listed"
			}
			if got != tc.git {
				t.Fatalf("git worktree list on the record: %s, want %s\n%s", got, tc.git, out)
			}

			mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
			if got := run(t, dir, "symbolic-ref", "--short", "HEAD"); got != "b" {
				t.Errorf("on %s, want b", got)
			}
			if st := run(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("the worktree is not clean:\n%s", st)
			}
			if reg := registered(t, repo); len(reg) != 1 || !samePath(reg[0], dir) {
				t.Errorf("registered worktrees = %v, want only %s", reg, dir)
			}
			if health(dir) != whole {
				t.Error("the worktree is not whole")
			}
			if names := records(t, repo); len(names) != 1 || names[0] != "task-1" {
				t.Errorf("worktree records = %v, want only task-1 (the killed add's cleared)", names)
			}
		})
	}
}

// A record git cannot read stops every other call too, and each clears
// it: a new run discards the task a kill left (Remove), a parallel run
// prunes first (Prune), the merge queue looks for its target
// (CheckedOut).
func TestCallsClearUnreadableRecord(t *testing.T) {
	ctx := context.Background()
	for name, call := range map[string]func(repo string) error{
		"Remove": func(repo string) error {
			return Remove(ctx, repo, filepath.Join(repo, ".ralph", "worktrees", "task-1"), "")
		},
		"Prune": func(repo string) error { return Prune(ctx, repo) },
		"CheckedOut": func(repo string) error {
			_, err := CheckedOut(ctx, repo, "main")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			repo, _ := newRepo(t)
			killedAdd(t, repo, filepath.Join(repo, ".ralph", "worktrees", "task-2"), 5, true)
			if err := call(repo); err != nil {
				t.Fatal(err)
			}
			if names := records(t, repo); len(names) != 0 {
				t.Errorf("worktree records = %v, want none", names)
			}
			run(t, repo, "worktree", "list", "--porcelain")
		})
	}
}

// Records git can use, lists or may be making, and what is not a record,
// stay: a locked record with a commondir but no gitdir (not what a kill
// leaves; git's prune decides once it is unlocked), a record of another
// name with no gitdir, a whole worktree whose name git could have given
// dir, and a symbolic link under worktrees/.
func TestEnsureLeavesOtherRecords(t *testing.T) {
	repo, start := newRepo(t)
	wts := filepath.Join(repo, ".ralph", "worktrees")
	admins := filepath.Join(repo, ".git", "worktrees")

	other := killedAdd(t, repo, filepath.Join(wts, "task-2"), 2, false)
	whole := filepath.Join(wts, "task-11")
	run(t, repo, "worktree", "add", "-q", "-b", "eleven", whole, start)
	usable := filepath.Join(admins, "task-13")
	write(t, filepath.Join(usable, "commondir"), "../..\n")
	write(t, filepath.Join(usable, "HEAD"), start+"\n")
	write(t, filepath.Join(usable, "locked"), "on a usb stick\n") // or git's prune takes it
	outside := filepath.Join(t.TempDir(), "elsewhere")
	write(t, filepath.Join(outside, "locked"), "initializing\n")
	link := filepath.Join(admins, "task-12")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(wts, "task-1")
	mustEnsure(t, repo, dir, Options{Branch: "b", Start: start})
	for _, p := range []string{other, usable, filepath.Join(outside, "locked"), filepath.Join(admins, "task-11", "commondir")} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link %s was removed or replaced: %v", link, err)
	}
	if st := run(t, whole, "status", "--porcelain"); st != "" {
		t.Errorf("the whole worktree changed:\n%s", st)
	}
	if reg := registered(t, repo); len(reg) != 2 {
		t.Errorf("registered worktrees = %v, want task-11 and task-1", reg)
	}
}

// A git killed as it made the worktree's branch (git worktree add -b
// runs a git branch of its own, which a kill of ralph's group ends too)
// leaves the branch's lock: Ensure removes it once it is older than a
// git holds one, waiting for a young one, and leaves a lock a live git
// removes meanwhile, and any lock on a branch not ralph's, alone.
func TestEnsureClearsABranchLockAKilledGitLeft(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		branch string
		age    time.Duration
		gone   bool // the git that holds it removes it while Ensure waits
		made   bool
	}{
		{"an old lock", "ralph/task/1", time.Hour, false, true},
		{"a young lock, waited for", "ralph/task/1", 600 * time.Millisecond, false, true},
		{"a lock its git removes", "ralph/task/1", 0, true, true},
		{"not ralph's branch", "feature", time.Hour, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, start := newRepo(t)
			lock := filepath.Join(repo, ".git", "refs", "heads", filepath.FromSlash(tc.branch)+".lock")
			if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-tc.age)
			if err := os.Chtimes(lock, at, at); err != nil {
				t.Fatal(err)
			}
			if tc.gone {
				go func() {
					time.Sleep(200 * time.Millisecond)
					os.Remove(lock)
				}()
			}
			if !git.CanTellRunningGits() && !tc.gone {
				tc.made = false // a container's view: no lock is removed
			}
			dir := filepath.Join(repo, ".ralph", "worktrees", "task-1")
			_, err := Ensure(ctx, repo, dir, Options{Branch: tc.branch, Start: start})
			if tc.made != (err == nil) {
				t.Fatalf("Ensure = %v, want it to make the worktree %v", err, tc.made)
			}
			if !tc.made {
				if _, serr := os.Stat(lock); serr != nil {
					t.Errorf("the lock on %s, not ralph's, was removed", tc.branch)
				}
				return
			}
			if got := strings.TrimSpace(run(t, repo, "rev-parse", "refs/heads/"+tc.branch)); got != start {
				t.Errorf("branch %s at %s, want %s", tc.branch, got, start)
			}
		})
	}
}

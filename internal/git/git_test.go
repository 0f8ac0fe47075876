package git

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// The directory is the repository, whatever the environment points at;
// git speaks English and says which subcommand failed.
func TestRunPolicy(t *testing.T) {
	ctx := context.Background()
	repo, other := newRepo(t), newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("LC_ALL", "fr_FR.UTF-8")
	top, err := Line(ctx, repo, "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(repo); top != want {
		t.Errorf("toplevel = %q, want %q (GIT_DIR must not redirect git)", top, want)
	}

	_, err = Run(ctx, t.TempDir(), "-c", "core.quotePath=false", "rev-parse", "HEAD")
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	if ge.Subcommand() != "rev-parse" || ge.ExitCode() != 128 {
		t.Errorf("subcommand %q, exit %d; want rev-parse, 128", ge.Subcommand(), ge.ExitCode())
	}
	if got, want := err.Error(), "git rev-parse: fatal: not a git repository"; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error = %q, want it to start with %q", got, want)
	}
}

// Options.Env wins over the policy; Stdin reaches git.
func TestRunWithOptions(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	out, err := RunWith(ctx, repo, Options{Stdin: []byte("hello\n")}, "hash-object", "--stdin")
	if err != nil || string(out) != "ce013625030ba8dba906f756967f9e9ca394464a\n" {
		t.Errorf("hash-object --stdin = %q, %v", out, err)
	}
	index := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(filepath.Join(repo, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RunWith(ctx, repo, Options{Env: []string{"GIT_INDEX_FILE=" + index}}, "add", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(index); err != nil {
		t.Errorf("GIT_INDEX_FILE from Options.Env was not used: %v", err)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "index")); err == nil {
		t.Error("git wrote the repository's own index")
	}
}

// A held index lock is reported as LockBusy, other failures are not.
func TestLockBusy(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "index.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx, repo, "add", "a")
	var ge *Error
	if !errors.As(err, &ge) || !ge.LockBusy() {
		t.Errorf("add with index.lock held: err = %v, want LockBusy", err)
	}
	_, err = Run(ctx, repo, "rev-parse", "--verify", "nope")
	if !errors.As(err, &ge) || ge.LockBusy() {
		t.Errorf("unknown revision: err = %v, want an *Error that is not LockBusy", err)
	}
}

// A cancelled call returns the context's error.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, newRepo(t), "status"); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// The agent can write .git/config and .git/hooks; the git ralph runs
// must not run what it put there: no hook on ralph's commit, no
// core.fsmonitor command on its status. A GIT_CONFIG_COUNT of the
// user's still applies.
func TestRunIgnoresPlantedHooksAndFsmonitor(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	planted := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\necho ran >> " + planted + "\n"
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	monitor := filepath.Join(repo, "monitor.sh")
	if err := os.WriteFile(monitor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, repo, "config", "core.fsmonitor", monitor); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "user.name")
	t.Setenv("GIT_CONFIG_VALUE_0", "From The Environment")
	if _, err := Run(ctx, repo, "status", "--porcelain"); err != nil {
		t.Fatal(err)
	}
	if _, err := RunWith(ctx, repo, Options{Env: []string{"GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_EMAIL=a@b"}}, "commit", "-q", "--allow-empty", "-m", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("a planted hook or fsmonitor command ran")
	}
	if name, _ := Line(ctx, repo, "log", "-1", "--format=%an"); name != "From The Environment" {
		t.Errorf("author = %q: the environment's own GIT_CONFIG_COUNT entry was lost", name)
	}
}

// ralph's git status never writes the user's index: a ralph killed in the
// middle of one would leave index.lock behind, and the user's next git
// command would refuse to run.
func TestStatusLeavesTheUsersIndexAlone(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@t"}, {"config", "user.name", "t"}} {
		if _, err := Run(context.Background(), dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), dir, "add", "a.txt"); err != nil {
		t.Fatal(err)
	}
	// Touch the file: its stat data in the index is now stale, which a
	// status with optional locks would refresh by writing the index.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "a.txt"), later, later)
	index := filepath.Join(dir, ".git", "index")
	before, _ := os.ReadFile(index)
	if _, err := Run(context.Background(), dir, "status", "--porcelain"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(index); !bytes.Equal(before, after) {
		t.Error("git status through internal/git rewrote the user's index")
	}
}

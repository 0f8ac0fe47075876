package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// gitError is a failed git invocation: the subcommand and what git said.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.subcommand(), msg)
}

// subcommand is the first argument that is not a global option.
func (e *gitError) subcommand() string {
	for i := 0; i < len(e.args); i++ {
		switch {
		case e.args[i] == "-c":
			i++
		case !strings.HasPrefix(e.args[i], "-"):
			return e.args[i]
		}
	}
	return strings.Join(e.args, " ")
}

func (e *gitError) Unwrap() error { return e.err }

// lockBusy reports whether git failed because another process holds one of
// its lock files, so that the same call can be tried again.
func (e *gitError) lockBusy() bool {
	return strings.Contains(e.stderr, ".lock': File exists")
}

// strippedEnv lists variables that would point git somewhere else or change
// how it reads pathspecs and identities; ralph sets its own.
var strippedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	"GIT_OPTIONAL_LOCKS", "LC_ALL", "LANGUAGE",
}

// baseEnv is the process environment without strippedEnv, plus extra.
func baseEnv(extra ...string) []string {
	var env []string
outer:
	for _, kv := range os.Environ() {
		for _, k := range strippedEnv {
			if strings.HasPrefix(kv, k+"=") {
				continue outer
			}
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// identity is the author and committer of every snapshot commit, set in the
// child's environment so that a machine with no git identity works.
var identity = []string{
	"GIT_AUTHOR_NAME=ralph", "GIT_AUTHOR_EMAIL=ralph@localhost",
	"GIT_COMMITTER_NAME=ralph", "GIT_COMMITTER_EMAIL=ralph@localhost",
}

// lockWait bounds how long a call waits for another process's git lock.
const lockWait = 5 * time.Second

// runGit runs git with args in dir and returns its standard output. A call
// that fails because a git lock file is held is retried until lockWait;
// unlock, when not nil, may remove a stale lock and report that it did.
func runGit(ctx context.Context, dir string, env []string, stdin []byte, unlock func(*gitError) bool, args ...string) ([]byte, error) {
	deadline := time.Now().Add(lockWait)
	delay := 10 * time.Millisecond
	for {
		out, err := runGitOnce(ctx, dir, env, stdin, args...)
		var ge *gitError
		if err == nil || !errors.As(err, &ge) || !ge.lockBusy() {
			return out, err
		}
		if unlock != nil && unlock(ge) {
			continue
		}
		if time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

func runGitOnce(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	// On cancel, ask git to stop so that it removes its lock files; kill it
	// only if it has not stopped after a while.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.Bytes(), nil
}

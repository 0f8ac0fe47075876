// Package git runs the git command for every part of ralph, with one
// environment policy: the caller's directory is the repository (variables
// that would point git elsewhere are removed), objects are read as they
// are (no replace refs, no grafts), messages are in English
// (LC_ALL=C), git never prompts, and a cancelled call asks git to stop so
// that it removes its own lock files.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Error is a failed git invocation: its arguments and what git said.
type Error struct {
	Args   []string
	Stderr string
	// Stdout is what git printed on its standard output; a few commands
	// (rebase, commit) say why they stopped there.
	Stdout string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = strings.TrimSpace(e.Stdout)
	}
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.Subcommand(), msg)
}

// Subcommand is the first argument that is not a global option.
func (e *Error) Subcommand() string {
	for i := 0; i < len(e.Args); i++ {
		switch {
		case e.Args[i] == "-c" || e.Args[i] == "-C":
			i++
		case !strings.HasPrefix(e.Args[i], "-"):
			return e.Args[i]
		}
	}
	return strings.Join(e.Args, " ")
}

func (e *Error) Unwrap() error { return e.Err }

// LockBusy reports whether git failed because another process holds one of
// its lock files, so that the same call can be tried again.
func (e *Error) LockBusy() bool {
	return strings.Contains(e.Stderr, ".lock': File exists")
}

// ExitCode is git's exit status, or -1 when it did not exit by itself.
func (e *Error) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// stripped lists variables that would point git somewhere else or change
// how it reads pathspecs, locks or messages; callers set their own through
// Options.Env.
var stripped = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
	"GIT_OPTIONAL_LOCKS", "GIT_TERMINAL_PROMPT", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"LC_ALL", "LANGUAGE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE",
}

// Env is the environment every git call starts from: the process's own
// without the variables that would redirect git, plus ralph's fixed ones,
// then extra (which wins over both).
func Env(extra ...string) []string {
	var env []string
outer:
	for _, kv := range os.Environ() {
		for _, k := range stripped {
			if strings.HasPrefix(kv, k+"=") {
				continue outer
			}
		}
		env = append(env, kv)
	}
	env = append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true")
	// ralph reads the objects as they are: the agent can write
	// refs/replace/ and .git/info/grafts, and a replacement would make a
	// rewritten branch look as if it still held the user's commits.
	env = append(env, "GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE="+os.DevNull)
	// A read such as git status takes no lock it can do without: it would
	// otherwise write the user's index back with fresh stat data, and a
	// ralph killed in the middle would leave the user's index.lock behind.
	// ralph's own private indexes set it back to 1 (Options.Env).
	env = append(env, "GIT_OPTIONAL_LOCKS=0")
	env = append(env, forcedConfig(os.Getenv("GIT_CONFIG_COUNT"))...)
	return append(env, extra...)
}

// forced is configuration every git ralph runs takes over the
// repository's: the agent can write .git/config and .git/hooks, and git
// would run a core.fsmonitor command or a hook of its choosing as ralph,
// outside the agent's sandbox. ralph's own commits (snapshots, landings)
// therefore run no hooks.
var forced = [][2]string{{"core.fsmonitor", "false"}, {"core.hooksPath", os.DevNull}}

// forcedConfig returns the GIT_CONFIG_COUNT variables that set forced,
// after the count entries the environment already sets (count is its
// GIT_CONFIG_COUNT).
func forcedConfig(count string) []string {
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		n = 0
	}
	var env []string
	for i, kv := range forced {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n+i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n+i, kv[1]))
	}
	return append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", n+len(forced)))
}

// IdentityName and IdentityEmail are who authors and commits the commits
// ralph makes itself.
const (
	IdentityName  = "ralph"
	IdentityEmail = "ralph@localhost"
)

// Identity is the author and committer of the commits ralph makes itself
// (snapshots, landings), for Options.Env, so that a machine with no git
// identity works.
var Identity = []string{
	"GIT_AUTHOR_NAME=" + IdentityName, "GIT_AUTHOR_EMAIL=" + IdentityEmail,
	"GIT_COMMITTER_NAME=" + IdentityName, "GIT_COMMITTER_EMAIL=" + IdentityEmail,
}

// Options are the rarer parts of a call.
type Options struct {
	// Env is added to Env()'s result, e.g. GIT_INDEX_FILE=… or Identity.
	Env []string
	// Stdin, when not nil, is git's standard input.
	Stdin []byte
	// ReadOnly sets GIT_OPTIONAL_LOCKS=0, so that a status or diff never
	// refreshes or locks the user's index.
	ReadOnly bool
	// Inherit are open files git inherits (as descriptors 3, 4, …), so
	// that a lock the caller holds on one lasts as long as git runs, even
	// when the caller dies first.
	Inherit []*os.File
}

// Run runs git with args in dir and returns its standard output. An error
// is an *Error carrying git's standard error, or ctx's error when the call
// was cancelled.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := RunWith(ctx, dir, Options{}, args...)
	return string(out), err
}

// Line is Run with the output's surrounding white space trimmed: for
// rev-parse, symbolic-ref and the other one-line answers.
func Line(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := Run(ctx, dir, args...)
	return strings.TrimSpace(out), err
}

// RunWith is Run with Options.
func RunWith(ctx context.Context, dir string, o Options, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	// On cancel, ask git to stop so that it removes its lock files; kill it
	// only if it has not stopped after a while.
	cmd.Cancel = func() error { return stop(cmd.Process) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = dir
	// A git must not outlive the ralph that started it: it would hold its
	// lock files, and go on changing the tree, after ralph was killed.
	cmd.SysProcAttr = dieWithParent()
	cmd.Env = Env(o.Env...)
	cmd.ExtraFiles = o.Inherit
	if o.ReadOnly {
		cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0")
	}
	if o.Stdin != nil {
		cmd.Stdin = bytes.NewReader(o.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return stdout.Bytes(), ctx.Err()
		}
		return stdout.Bytes(), &Error{Args: args, Stderr: stderr.String(), Stdout: stdout.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

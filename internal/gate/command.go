package gate

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
)

// Command is a gate that runs a program: it passes when the program exits
// 0. The argv is never given to a shell.
type Command struct {
	GateName string
	Argv     []string
	// Dir is relative to the workspace root; empty means the root.
	Dir     string
	Timeout time.Duration
	// Optional turns a failure into a warning.
	Optional bool
}

// outputTail is how much of a failing command's output the feedback keeps.
const outputTail = 4000

// Name returns the gate's configured name.
func (c *Command) Name() string { return c.GateName }

// MayWriteTree reports true: the program may write anywhere in the tree.
func (*Command) MayWriteTree(Env) bool { return true }

// ChecksWork reports whether the command can hold a completion: it is the
// project's own check, unless Optional makes its failure a warning.
func (c *Command) ChecksWork() bool { return !c.Optional }

// DefaultTimeout is how long a command gate may run when its
// configuration names no timeout.
const DefaultTimeout = 10 * time.Minute

// Check runs the command. It fails when the command does not finish
// within its timeout, and when it leaves behind a process that escaped its
// process group holding the output.
func (c *Command) Check(ctx context.Context, env Env) Result {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir := env.Root
	if c.Dir != "" {
		dir = filepath.Join(env.Root, c.Dir)
	}
	var out strings.Builder
	collect := func(line string) {
		if out.Len() < 1<<20 {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	// A gate leaves nothing running: what left its group with setsid is
	// found by the group's token and ended with it.
	res, err := proc.Run(ctx, proc.Spec{Argv: c.Argv, Dir: dir, OnLine: collect, OnStderrLine: collect, EndEscaped: true})
	cmdline := strings.Join(c.Argv, " ")
	fail := Fail
	if c.Optional {
		fail = Warn
	}
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return Result{Status: fail, Message: fmt.Sprintf("`%s`: program %q not found", cmdline, c.Argv[0]),
			Fix: fmt.Sprintf("Install %s, or fix the gate %q in ralph.toml.", c.Argv[0], c.GateName)}
	case errors.Is(err, context.DeadlineExceeded):
		msg := fmt.Sprintf("`%s` did not finish within %s", cmdline, timeout)
		if note := res.EscapeNote(); note != "" {
			msg += "; " + note
		}
		return Result{Status: fail, Message: msg + "\n\n" + tail(out.String()),
			Fix: "Make it finish faster: look for a hang or an infinite loop in what it runs, or a server it starts in the background."}
	case err != nil:
		return Result{Status: fail, Message: fmt.Sprintf("`%s`: %v", cmdline, err)}
	case res.Escaped != nil:
		return Result{Status: fail,
			Message: fmt.Sprintf("`%s` left a process running: %s\n\n%s", cmdline, res.EscapeNote(), tail(out.String())),
			Fix:     fmt.Sprintf("Make `%s` stop every process it starts before it exits; a gate must not leave a server running in the background.", cmdline)}
	case res.ExitCode != 0:
		return Result{Status: fail,
			Message: fmt.Sprintf("`%s` exited with status %d:\n\n```\n%s\n```", cmdline, res.ExitCode, tail(out.String())),
			Fix:     fmt.Sprintf("Run `%s` yourself, fix every error it reports, and run it again until it exits 0.", cmdline)}
	}
	return Result{Status: Pass, Message: fmt.Sprintf("`%s` passed", cmdline)}
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= outputTail {
		return s
	}
	return "…\n" + s[len(s)-outputTail:]
}

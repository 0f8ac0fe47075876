// Package proc runs agent and gate subprocesses the way a long unattended
// run needs: each in its own session and process group, its output read
// line by line as it arrives, the whole group killed on cancellation, on an
// idle timeout or when the leader exits (so nothing it started is left
// behind), and the parent's nested-agent variables (and any the caller
// names, such as API keys) removed from its environment.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrIdle means the process printed nothing for longer than the idle
// timeout and was killed.
var ErrIdle = errors.New("no output within the idle timeout")

// Spec describes one subprocess.
type Spec struct {
	// Argv is the program and its arguments. It is never passed to a shell.
	Argv []string
	// Dir is the working directory.
	Dir string
	// Env is added to the scrubbed parent environment (KEY=VALUE).
	Env []string
	// Unset names variables removed from the parent environment as well
	// as the nested-agent ones, such as secrets the child must not see.
	// Env is added after, so a variable set there is kept.
	Unset []string
	// Stdin is written to the process's standard input, which is then
	// closed. Nil means an empty standard input.
	Stdin io.Reader
	// OnLine is called for every line of standard output, without its
	// newline, from a single goroutine. Nil discards standard output.
	OnLine func(line string)
	// OnStderrLine is called for every line of standard error. Standard
	// error is also kept (the last StderrLimit bytes) for error messages.
	OnStderrLine func(line string)
	// IdleTimeout kills the process group when neither output stream has
	// produced anything for this long. Zero means no idle limit.
	IdleTimeout time.Duration
	// KillGrace is how long the group has between SIGTERM and SIGKILL
	// when cancelled. Zero means 2 seconds.
	KillGrace time.Duration
}

// Result is how a subprocess ended.
type Result struct {
	// ExitCode is the exit status, -1 when killed by a signal.
	ExitCode int
	// Stderr is the tail of standard error.
	Stderr string
	// Duration is the wall time from start to exit.
	Duration time.Duration
}

// StderrLimit is how much of the end of standard error Result keeps.
const StderrLimit = 16 << 10

// maxLine is the longest output line delivered whole; longer lines are
// split (agent event streams can carry large tool results on one line).
const maxLine = 64 << 20

// nestedAgentVars are variables an agent CLI sets for its own children.
// A ralph started from inside such an agent must not pass them on, or the
// child agent believes it is nested and changes its behaviour.
var nestedAgentVars = []string{
	"CLAUDECODE",
	"CLAUDE_CODE_ENTRYPOINT",
	"CLAUDE_CODE_SSE_PORT",
	"CODEX_SANDBOX",
	"CODEX_SANDBOX_NETWORK_DISABLED",
	"CODEX_THREAD_ID",
	"GEMINI_CLI",
	"OPENCODE",
	"AMP_THREAD_ID",
	// What Qwen Code 0.24 and Copilot CLI 1.0 were seen to set for the
	// commands their shell tools run.
	"QWEN_CODE",
	"QWEN_CODE_SESSION_ID",
	"QWEN_CODE_AGENT_ID",
	"QWEN_CODE_PROMPT_ID",
	"QWEN_CODE_PROJECT_DIR",
	"QWEN_CODE_NO_RELAUNCH",
	"QWEN_CODE_LAUNCHER_PID",
	"QWEN_CODE_CLI",
	"QWEN_CODE_STARTUP_VERSION",
	"COPILOT_CLI",
	"COPILOT_AGENT_SESSION_ID",
	"COPILOT_CLI_RESOLVED_DIST_DIR",
	"COPILOT_CLI_BINARY_VERSION",
}

// Environ returns the parent's environment without the nested-agent
// variables, followed by extra.
func Environ(extra ...string) []string {
	return environ(nil, extra)
}

// environ returns the parent's environment without the nested-agent
// variables and those named in unset, followed by extra.
func environ(unset, extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(nestedAgentVars, name) || slices.Contains(unset, name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// Run starts the process described by s and waits for it to end. It
// returns an error wrapping exec.ErrNotFound when the program does not
// exist, ErrIdle on an idle timeout, and ctx.Err() when ctx ended first;
// a non-zero exit status is not an error (see Result.ExitCode).
func Run(ctx context.Context, s Spec) (Result, error) {
	if len(s.Argv) == 0 {
		return Result{}, errors.New("run: empty command")
	}
	path, err := exec.LookPath(s.Argv[0])
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], err)
	}
	cmd := exec.Command(path, s.Argv[1:]...)
	cmd.Args[0] = s.Argv[0]
	cmd.Dir = s.Dir
	cmd.Env = environ(s.Unset, s.Env)
	if s.Dir != "" {
		// PWD must name the directory the child runs in: programs that
		// trust it (Node and Bun CLIs such as opencode) would otherwise
		// take ralph's own directory for their workspace. Spec.Env can
		// still set it.
		if abs, err := filepath.Abs(s.Dir); err == nil {
			cmd.Env = environ(s.Unset, append([]string{"PWD=" + abs}, s.Env...))
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.Stdin != nil {
		cmd.Stdin = s.Stdin
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], err)
	}
	cmd.Stdout = outW
	cmd.Stderr = errW

	start := time.Now()
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], err)
	}
	// The child has its own copies of the write ends.
	outW.Close()
	errW.Close()
	pgid := cmd.Process.Pid

	activity := make(chan struct{}, 1)
	touch := func() {
		select {
		case activity <- struct{}{}:
		default:
		}
	}
	var stderr tail
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		readLines(outR, func(line string) {
			touch()
			if s.OnLine != nil {
				s.OnLine(line)
			}
		})
	}()
	go func() {
		defer readers.Done()
		readLines(errR, func(line string) {
			touch()
			stderr.write(line)
			if s.OnStderrLine != nil {
				s.OnStderrLine(line)
			}
		})
	}()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	grace := s.KillGrace
	if grace == 0 {
		grace = 2 * time.Second
	}
	var idle <-chan time.Time
	var idleTimer *time.Timer
	if s.IdleTimeout > 0 {
		idleTimer = time.NewTimer(s.IdleTimeout)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}

	var waitErr, cause error
loop:
	for {
		select {
		case waitErr = <-exited:
			break loop
		case <-activity:
			if idleTimer != nil {
				idleTimer.Reset(s.IdleTimeout)
			}
		case <-idle:
			cause = ErrIdle
			waitErr = terminate(pgid, grace, exited)
			break loop
		case <-ctx.Done():
			cause = ctx.Err()
			waitErr = terminate(pgid, grace, exited)
			break loop
		}
	}
	// Whatever the leader left running goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	readers.Wait()
	outR.Close()
	errR.Close()

	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Stderr: stderr.String(), Duration: time.Since(start)}
	if cause != nil {
		return res, cause
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("run %s: %w", s.Argv[0], waitErr)
	}
	return res, nil
}

// terminate sends SIGTERM to the group, then SIGKILL after grace, and
// returns the leader's wait error.
func terminate(pgid int, grace time.Duration, exited <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-exited
	}
}

func readLines(r io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(chunk) > 0 || isPrefix {
			buf = append(buf, chunk...)
		}
		if err != nil {
			if len(buf) > 0 {
				fn(string(buf))
			}
			return
		}
		if isPrefix && len(buf) < maxLine {
			continue
		}
		fn(string(bytes.TrimSuffix(buf, []byte("\r"))))
		buf = buf[:0]
	}
}

// tail keeps the last StderrLimit bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) write(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, line...)
	t.buf = append(t.buf, '\n')
	if len(t.buf) > StderrLimit {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-StderrLimit:]...)
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

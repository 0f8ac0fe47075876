// Package proc runs agent and gate subprocesses the way a long unattended
// run needs: each in its own session and process group, its output read
// line by line as it arrives, the whole group killed on cancellation, on an
// idle timeout or when the leader exits (so nothing it started is left
// behind), and the parent's nested-agent variables (and any the caller
// names, such as API keys) removed from its environment.
//
// # Nothing outlives ralph
//
// On Linux every program runs under a supervisor: ralph's own binary
// re-executed (/proc/self/exe, so an upgraded or deleted binary still
// works) with argv[0] "ralph-supervisor" and RALPH_PROC_SUPERVISOR set to
// ralph's pid. RunSupervisor, which ralph's main calls first, recognises
// that and supervises instead of running main; a binary that never calls
// it (a test binary whose TestMain does not) runs programs directly. The supervisor leads a new session and group (Setsid) and has a
// parent-death signal (Pdeathsig SIGTERM); it runs the program in its own
// group with the same standard streams and exits with the program's status
// (or dies by the same signal). Ralph signals the group, so the program
// gets every signal directly; the supervisor ignores them unless its
// parent is gone (getppid changed, checked on every signal and twice a
// second in case the parent-death signal was lost), and then sends the
// group SIGTERM, waits 300ms and sends it SIGKILL, itself included. A
// parent-death signal alone is not enough: it reaches only the direct
// child, is not inherited, and a grandchild may ignore SIGTERM. When the
// supervisor cannot start (no /proc), the program runs directly in its own
// group, as it does on other systems. A supervisor re-executed for each
// program costs a fork and exec of ralph's binary (about 6.5 ms of wall
// time and 7 ms of CPU). So that this is paid once, not per program, Run
// hands every program to one persistent supervisor per ralph process,
// started by the first Run that needs it: it starts each program in a new
// session and group of its own, reports its end over a socket, and ends
// every group it started when ralph is gone (see persistent_linux.go).
// When there is none, or it cannot start the program, Run starts a
// supervisor for the program the cold way.
//
// A supervisor killed outright (SIGKILL, the OOM killer) cannot clean up.
// For that, a caller records every group it starts through a StartHook
// (WithStartHook) — a random token put in the environment of every member
// (RALPH_PROC_TOKEN), recorded before the group starts, then the group id
// and the leader's start time, and its own pid and start time (Self) —
// and a later ralph ends the recorded groups of a dead ralph that still
// run (FindOrphans, EndOrphan).
//
// # Escaped processes
//
// A process that leaves the group (setsid, as a background dev server
// does) is not killed with it, and may hold the output pipes open for
// ever. Run reads them for PipeGrace after the group is gone, then closes
// its ends and reports the holders in Result.Escaped. Such a process keeps
// the group's token: with Spec.EndEscaped (a gate, which must leave
// nothing running) Run kills every process carrying it once the group is
// gone, and Judge counts them in a dead ralph's orphaned group wherever
// they now are (ProcessTable.Carrying, read from /proc on Linux).
package proc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// EndEscaped kills, when the group has ended, the processes that left
	// it (setsid) but still carry its token, and reports them in
	// Result.Ended: for a gate, which must leave nothing running.
	EndEscaped bool
	// Ruleset is a Landlock ruleset (internal/sandbox) the supervisor
	// enforces on itself right before it starts the program, so it holds
	// for the program and all it starts. Nil runs it unconfined. A
	// confined program never runs without a supervisor. The caller
	// closes it after Run.
	Ruleset *os.File
}

// Result is how a subprocess ended.
type Result struct {
	// ExitCode is the exit status, -1 when killed by a signal.
	ExitCode int
	// Stderr is the tail of standard error.
	Stderr string
	// Duration is the wall time from start to exit.
	Duration time.Duration
	// Escaped is non-nil when, after the process group was gone, a
	// process that had left the group (with setsid, as a background
	// server does) still held the output pipes, so Run stopped reading
	// after PipeGrace. It lists the holders it could identify.
	Escaped []Escapee
	// Ended lists the processes that had left the group carrying its
	// token and were killed when it ended (Spec.EndEscaped).
	Ended []Escapee
}

// Escapee is a process that left its group and kept the output open.
type Escapee struct {
	PID     int
	Command string
}

// EscapeNote says in one sentence what escaped, or "" when nothing did.
func (r Result) EscapeNote() string {
	if r.Escaped == nil {
		return ""
	}
	if len(r.Escaped) == 0 {
		return "a process it started left its process group and kept its output open; ralph stopped reading it"
	}
	fate := "left it running"
	if len(r.Ended) > 0 {
		fate = "ended it"
	}
	return fmt.Sprintf("%s left its process group and kept its output open; ralph stopped reading it and %s", listEscapees(r.Escaped), fate)
}

// Started describes a process group Run has just started.
type Started struct {
	// PGID is the group's id, which is also its leader's pid.
	PGID int
	// LeaderStart is the leader's start time in clock ticks after boot
	// (field 22 of /proc/PID/stat), so a reused pid is not mistaken for
	// it; 0 when unknown.
	LeaderStart uint64
	// Token is a random value in the environment of every process of
	// the group (RALPH_PROC_TOKEN), so members are recognised after
	// their leader has died.
	Token string
	// Argv0 is the program as the caller named it.
	Argv0 string
}

// StartHook records the process groups Run starts. Run calls it in the
// caller's goroutine before it starts a group, with the token every
// member will carry and the program (PGID and LeaderStart zero): a record
// made then exists before any process of the group does, so a ralph and
// its supervisor killed at any moment leave no process a later ralph
// cannot find by its token. Run then calls the Recording's Started once
// the group started (PGID and LeaderStart set), and its Done with the
// result once the group ended, or with a zero Result when it could not
// start it.
type StartHook func(Started) Recording

// Recording is what a StartHook wants to hear about the group it was
// told of; either function may be nil. A Recording that Refuses the
// start makes Run start nothing and return that error (Done is not
// called).
type Recording struct {
	Started func(Started)
	Done    func(Result)
	Refused error
}

type hookKey struct{}

// WithStartHook returns a context that makes Run call h for every process
// group it starts under it, so a caller can record the groups without
// changing the code that runs them.
func WithStartHook(ctx context.Context, h StartHook) context.Context {
	return context.WithValue(ctx, hookKey{}, h)
}

// tokenEnv carries Started.Token to every process of the group.
const tokenEnv = "RALPH_PROC_TOKEN"

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
	// A ralph run by an agent marks its own groups.
	tokenEnv,
	supervisorEnv,
	controlEnv,
	sandboxEnv,
}

// withheld are variables holding ralph's own secrets (Withhold).
var withheld struct {
	sync.Mutex
	names []string
}

// Withhold keeps the named variables from every program ralph starts from
// now on: they hold ralph's own secrets (a notification channel's token),
// which neither an agent nor a gate needs, and an agent must not have.
func Withhold(names ...string) {
	withheld.Lock()
	defer withheld.Unlock()
	for _, n := range names {
		if n != "" && !slices.Contains(withheld.names, n) {
			withheld.names = append(withheld.names, n)
		}
	}
}

// isWithheld reports whether Withhold named name.
func isWithheld(name string) bool {
	withheld.Lock()
	defer withheld.Unlock()
	return slices.Contains(withheld.names, name)
}

// Environ returns the parent's environment without the nested-agent
// variables, followed by extra.
func Environ(extra ...string) []string {
	return environ(nil, extra)
}

// environ returns the parent's environment without the nested-agent
// variables, the withheld ones and those named in unset, followed by
// extra.
func environ(unset, extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(nestedAgentVars, name) || slices.Contains(unset, name) || isWithheld(name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// PipeGrace is how long Run keeps reading the output pipes after the
// process group is gone. Only a process that left the group (setsid) can
// still hold them then; after the grace Run closes its ends and reports
// the escape in Result.Escaped.
const PipeGrace = 500 * time.Millisecond

// runs counts the calls of Run in this process, running those under way.
var runs, running atomic.Int64

// Runs is how many programs this process has asked Run to start: equal
// at two moments, no program started between them (as far as Run knows).
func Runs() int64 { return runs.Load() }

// Running is how many calls of Run in this process have not returned.
func Running() int64 { return running.Load() }

// Run starts the process described by s and waits for it to end. It
// returns an error wrapping exec.ErrNotFound when the program does not
// exist, ErrIdle on an idle timeout, and ctx.Err() when ctx ended first;
// a non-zero exit status is not an error (see Result.ExitCode).
func Run(ctx context.Context, s Spec) (Result, error) {
	if len(s.Argv) == 0 {
		return Result{}, errors.New("run: empty command")
	}
	runs.Add(1)
	running.Add(1)
	defer running.Add(-1)
	path, err := exec.LookPath(s.Argv[0])
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], err)
	}
	token := newToken()
	extra := s.Env
	if s.Dir != "" {
		// PWD must name the directory the child runs in: programs that
		// trust it (Node and Bun CLIs such as opencode) would otherwise
		// take ralph's own directory for their workspace. Spec.Env can
		// still set it.
		if abs, err := filepath.Abs(s.Dir); err == nil {
			extra = append([]string{"PWD=" + abs}, s.Env...)
		}
	}
	env := append(environ(s.Unset, extra), tokenEnv+"="+token)
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
	setup := func(cmd *exec.Cmd) *exec.Cmd {
		cmd.Dir = s.Dir
		if s.Stdin != nil {
			cmd.Stdin = s.Stdin
		}
		cmd.Stdout = outW
		cmd.Stderr = errW
		// A descendant outside the group may hold standard input open
		// too: stop copying to it soon after the process ends.
		cmd.WaitDelay = PipeGrace
		return cmd
	}
	var rec Recording
	if hook, ok := ctx.Value(hookKey{}).(StartHook); ok {
		rec = hook(Started{Token: token, Argv0: s.Argv[0]})
	}
	if rec.Refused != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], rec.Refused)
	}
	start := time.Now()
	var pgid int
	var leaderStart uint64
	var wait func() (code int, err error)
	// reaper is the child subreaper what leaves the group is below, once it
	// has ended: the persistent supervisor, while it answers.
	var reaper int
	if l, ok := startPersistent(s, path, env, outW, errW); ok {
		pgid, leaderStart = l.pid, l.start
		wait = func() (code int, err error) {
			code, reaper = l.wait()
			return code, nil
		}
	} else {
		cmd := setup(command(path, s.Argv, env))
		if s.Ruleset != nil && cmd.Path == path {
			err = errNoSupervisor
		} else {
			handOver(cmd, s)
			err = cmd.Start()
		}
		if err != nil && cmd.Path != path && s.Ruleset == nil {
			// The supervisor could not start (no /proc?): run the
			// program directly, still in its own group.
			cmd = setup(directCommand(path, s.Argv, env))
			err = cmd.Start()
		}
		if err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			if rec.Done != nil {
				rec.Done(Result{})
			}
			return Result{}, fmt.Errorf("run %s: %w", s.Argv[0], err)
		}
		pgid = cmd.Process.Pid
		leaderStart, _ = startTime(pgid)
		wait = func() (int, error) {
			err := cmd.Wait()
			return cmd.ProcessState.ExitCode(), err
		}
	}
	// The child has its own copies of the write ends.
	outW.Close()
	errW.Close()
	adopt(pgid)
	// What leaves the group was started after its leader: the processes
	// older than it are never looked at when the group's escapees end.
	var since uint64
	if s.EndEscaped {
		since = leaderStart
	}
	var res Result
	if rec.Started != nil {
		rec.Started(Started{PGID: pgid, LeaderStart: leaderStart, Token: token, Argv0: s.Argv[0]})
	}
	if rec.Done != nil {
		defer func() { rec.Done(res) }()
	}

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

	// drained closes when both streams reached their end (the readers
	// ended), which is usually before the program's end is known.
	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()

	var code int
	exited := make(chan error, 1)
	go func() {
		var err error
		code, err = wait()
		exited <- err
	}()

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
	killGroup(pgid)
	// The group is gone, so the pipes close unless a process that left
	// the group holds them: read what is left for a short grace only.
	pipeGrace := time.NewTimer(PipeGrace)
	defer pipeGrace.Stop()
	var escaped []Escapee
	select {
	case <-drained:
	case <-pipeGrace.C:
		escaped = pipeHolders(outR, errR)
		if escaped == nil {
			escaped = []Escapee{}
		}
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	var ended []Escapee
	if s.EndEscaped {
		ended = endCarrying(token, since, start, reaper)
	}

	res = Result{ExitCode: code, Stderr: stderr.String(), Duration: time.Since(start), Escaped: escaped, Ended: ended}
	if cause != nil {
		return res, cause
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("run %s: %w", s.Argv[0], waitErr)
	}
	return res, nil
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

package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A standby is a supervisor started ahead of the program it will run:
// while one program runs, Run starts the next supervisor (this binary
// re-executed, as for a cold start), which initialises and then waits on
// a control socket. The next Run hands it the program over that socket
// (path, argv, environment, directory, and as descriptors the standard
// streams and the ruleset) and it starts it at once, so the re-execution
// is not paid between two programs. It is the same supervisor afterwards:
// the same session and group, parent-death signal and orphan check.
//
// A waiting standby ends when the control socket closes: ralph exits or
// dies (the kernel closes ralph's end), or drops it (KeepStandby(false)).
// It also ends on its parent-death signal once its parent is gone. When
// anything goes wrong before the program has started (the standby died,
// the directory or program is missing, the ruleset cannot be enforced),
// Run kills the standby's group and starts the program the cold way,
// which reports the failure exactly as before.

// standbyEnv, set in a supervisor's environment, names the descriptor of
// its end of the control socket: the supervisor is a standby.
const standbyEnv = "RALPH_PROC_STANDBY"

// controlFD is the control socket's descriptor in the standby: the first
// of cmd.ExtraFiles.
const controlFD = 3

// replyTimeout bounds how long Run waits for a standby to say it started
// the program before it gives up on it (kills its group and starts the
// program the cold way). The reply follows the program's execve at once;
// only a standby stopped or starved of CPU for that long misses it.
const replyTimeout = 30 * time.Second

// Replies of the standby, one byte after it tried to start the program.
const (
	replyStarted byte = 0
	replyFailed  byte = 1
)

// standby is a supervisor waiting for its program.
type standby struct {
	cmd *exec.Cmd
	ctl int // ralph's end of the control socket
}

// standbys holds the one idle standby.
var standbys struct {
	sync.Mutex
	idle     *standby
	starting bool
	off      bool
}

// standbyStarts counts the programs started on a standby (for tests).
var standbyStarts atomic.Int64

// supervisorExe is the binary re-executed as a supervisor (SuperviseAs).
var supervisorExe atomic.Pointer[string]

// SuperviseAs makes Run start every supervisor from the binary at path
// instead of re-executing this one, as if RunSupervisor had been called:
// a program that is not ralph (bench/gap) runs its programs under ralph's
// supervisor. path's main must call RunSupervisor first thing.
func SuperviseAs(path string) {
	supervisorExe.Store(&path)
	canSupervise.Store(true)
}

func supervisorPath() string {
	if p := supervisorExe.Load(); p != nil {
		return *p
	}
	return "/proc/self/exe"
}

// KeepStandby sets whether Run keeps a supervisor started ahead for the
// next program (the default). Turning it off ends the idle one, so every
// program then pays for a cold supervisor start: bench/gap measures both.
func KeepStandby(on bool) {
	standbys.Lock()
	standbys.off = !on
	sb := standbys.idle
	if !on {
		standbys.idle = nil
	}
	standbys.Unlock()
	if !on && sb != nil {
		sb.discard()
	}
}

// runtimeVars are the variables of ralph's environment a standby gets:
// what Go's runtime reads, so that it runs as a cold supervisor would (a
// coverage build, for one, warns on exit without GOCOVERDIR).
var runtimeVars = []string{"GOCOVERDIR", "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK"}

// newStandby starts a supervisor that waits for its program. Its
// environment holds what marks it as one and Go's runtime variables
// only: it must not carry ralph's secrets, nor can it know the program's
// environment yet.
func newStandby() (*standby, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("standby: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "standby-control")
	defer child.Close()
	tv := syscall.NsecToTimeval(int64(replyTimeout))
	_ = syscall.SetsockoptTimeval(fds[0], syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	cmd := &exec.Cmd{
		Path: supervisorPath(),
		Args: []string{supervisorArg0},
		Env:  standbyEnviron(),
		// Not ralph's directory, which may be a worktree removed later.
		Dir:        "/",
		ExtraFiles: []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:    true,
			Pdeathsig: syscall.SIGTERM,
		},
	}
	if err := cmd.Start(); err != nil {
		syscall.Close(fds[0])
		return nil, fmt.Errorf("standby: %w", err)
	}
	return &standby{cmd: cmd, ctl: fds[0]}, nil
}

func standbyEnviron() []string {
	env := []string{supervisorEnv + "=" + strconv.Itoa(os.Getpid()), standbyEnv + "=" + strconv.Itoa(controlFD)}
	for _, name := range runtimeVars {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// discard ends sb and its group and reaps it.
func (sb *standby) discard() {
	killGroup(sb.cmd.Process.Pid)
	syscall.Close(sb.ctl)
	_ = sb.cmd.Wait()
}

// refillStandby starts a standby in the background when none is idle or
// starting, and returns a function that waits until that is done (Run
// calls it before returning, so no goroutine outlives it).
func refillStandby() (wait func()) {
	standbys.Lock()
	if standbys.off || standbys.idle != nil || standbys.starting || !canSupervise.Load() {
		standbys.Unlock()
		return func() {}
	}
	standbys.starting = true
	standbys.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sb, err := newStandby()
		standbys.Lock()
		standbys.starting = false
		if err == nil && (standbys.off || standbys.idle != nil) {
			standbys.Unlock()
			sb.discard()
			return
		}
		if err == nil {
			standbys.idle = sb
		}
		standbys.Unlock()
	}()
	return func() { <-done }
}

// takeStandby returns the idle standby, if any, which is then the
// caller's.
func takeStandby() *standby {
	standbys.Lock()
	defer standbys.Unlock()
	sb := standbys.idle
	standbys.idle = nil
	return sb
}

// startOnStandby starts the program of s (path, with the prepared env and
// output pipes) on the idle standby. It returns the standby's command,
// whose process is the group's leader, and the function that waits for it
// to end; ok is false when there was no standby or it could not start
// the program, and the caller starts it the cold way.
func startOnStandby(s Spec, path string, env []string, stdout, stderr *os.File) (cmd *exec.Cmd, wait func() error, ok bool) {
	if !canSupervise.Load() {
		return nil, nil, false
	}
	sb := takeStandby()
	if sb == nil {
		return nil, nil, false
	}
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		sb.discard()
		return nil, nil, false
	}
	stdin, feed, err := stdinFor(s.Stdin)
	if err != nil {
		sb.discard()
		return nil, nil, false
	}
	files := []*os.File{stdin, stdout, stderr}
	if s.Ruleset != nil {
		files = append(files, s.Ruleset)
	}
	msg, err := encodeProgram(program{Path: path, Dir: dir, Argv: s.Argv, Env: env, Ruleset: s.Ruleset != nil})
	if err == nil {
		err = sb.handOver(msg, files)
	}
	if stdin != s.Stdin {
		stdin.Close()
	}
	if err != nil {
		if feed != nil {
			feed.Close()
		}
		sb.discard()
		return nil, nil, false
	}
	standbyStarts.Add(1)
	fed := make(chan struct{})
	if feed != nil {
		go func() {
			defer close(fed)
			_, _ = io.Copy(feed, s.Stdin)
			feed.Close()
		}()
	} else {
		close(fed)
	}
	wait = func() error {
		err := sb.cmd.Wait()
		// A process that left the group may hold standard input open
		// without reading it: stop feeding it soon after the end, as
		// exec.Cmd's WaitDelay does on the cold path.
		select {
		case <-fed:
		case <-time.After(PipeGrace):
			feed.Close()
			<-fed
		}
		return err
	}
	return sb.cmd, wait, true
}

// stdinFor returns the file to hand over as the program's standard input
// for r and, when r is not a file, the pipe end to copy r into.
func stdinFor(r io.Reader) (stdin, feed *os.File, err error) {
	switch r := r.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		return f, nil, err
	case *os.File:
		return r, nil, nil
	}
	pr, pw, err := os.Pipe()
	return pr, pw, err
}

// handOver sends the program and its descriptors to the standby and waits
// for it to say it started the program.
func (sb *standby) handOver(msg []byte, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	oob := syscall.UnixRights(fds...)
	for len(msg) > 0 {
		n, err := syscall.SendmsgN(sb.ctl, msg, oob, nil, syscall.MSG_NOSIGNAL)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		msg, oob = msg[n:], nil
	}
	var reply [1]byte
	for {
		n, err := syscall.Read(sb.ctl, reply[:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		switch {
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		case reply[0] != replyStarted:
			return errors.New("standby: the program did not start")
		}
		syscall.Close(sb.ctl)
		return nil
	}
}

// standBy is the standby's life: wait for the program on the control
// socket ctl, start it and supervise it, or end when the socket closes or
// the parent is gone. A program it cannot start is reported on the
// socket, not on standard error: Run starts it again the cold way, which
// says why.
func standBy(parent, ctl int) int {
	syscall.CloseOnExec(ctl)
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	orphaned := func() bool { return os.Getppid() != parent }
	if orphaned() {
		return 1
	}
	// What a first process start does once (os checks that pidfds work,
	// with a vfork of its own) is done now, not once the program waits.
	if self, err := os.FindProcess(os.Getpid()); err == nil {
		_ = self.Release()
	}
	// The program is received on this goroutine, which then starts it
	// at once; the guard ends the standby if the parent goes first.
	g := guardParent(parent, sigs)
	p, fds, err := receiveProgram(ctl)
	if err != nil || orphaned() {
		return 1
	}
	reply := func(b byte) { _, _ = syscall.Write(ctl, []byte{b}) }
	// The standard streams become the program's, so that the supervisor's
	// own messages go where the program's would.
	for i := range 3 {
		if err := syscall.Dup3(fds[i], i, 0); err != nil {
			reply(replyFailed)
			return 1
		}
		syscall.Close(fds[i])
	}
	if p.Ruleset {
		if err := restrictThread(fds[3]); err != nil {
			reply(replyFailed)
			return 126
		}
	}
	cmd := &exec.Cmd{Path: p.Path, Args: p.Argv, Env: p.Env, Dir: p.Dir, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		reply(replyFailed)
		return 127
	}
	reply(replyStarted)
	syscall.Close(ctl)
	return g.wait(cmd)
}

// receiveProgram reads one program and its descriptors from ctl.
func receiveProgram(ctl int) (program, []int, error) {
	var fds []int
	var buf []byte
	chunk := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(ctl, chunk, oob, syscall.MSG_CMSG_CLOEXEC)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return program{}, nil, err
		}
		if oobn > 0 {
			msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return program{}, nil, err
			}
			for _, m := range msgs {
				rights, err := syscall.ParseUnixRights(&m)
				if err == nil {
					fds = append(fds, rights...)
				}
			}
		}
		if n == 0 {
			return program{}, nil, io.ErrUnexpectedEOF
		}
		buf = append(buf, chunk[:n]...)
		if complete, err := framed(buf); err != nil {
			return program{}, nil, err
		} else if !complete {
			continue
		}
		p, err := decodeProgram(buf)
		if err != nil {
			return program{}, nil, err
		}
		want := 3
		if p.Ruleset {
			want = 4
		}
		if len(fds) != want {
			return program{}, nil, fmt.Errorf("standby: %d descriptors, want %d", len(fds), want)
		}
		return p, fds, nil
	}
}

package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The persistent supervisor: one supervisor (this binary re-executed, as
// for a cold start) per ralph process, started by the first Run that
// needs it, runs every program Run hands it, so that no re-execution is
// paid per program. This file is ralph's side, serve_linux.go the
// supervisor's.
//
// Ralph holds one end of a control socket (SOCK_SEQPACKET); each Run
// makes a socket pair of its own and sends one end of it over the control
// socket. On that connection Run sends the program (see handoff_linux.go)
// with its standard streams and its ruleset (SCM_RIGHTS); the supervisor
// forks and executes it in a new session and process group, replies with
// its pid and start time, waits for it to end, kills what is left of its
// group (as Run does next) and replies with its wait status. Ralph keeps
// a connection whose program's end was reported (a few, idle) for a next
// program, which the supervisor is then already waiting for on it. A
// confined program is started from a goroutine locked to an OS thread of
// its own, the thread alone restricted and then discarded, so that the
// ruleset holds for that program and what it starts and for no other.
//
// The supervisor ends every group it started (SIGTERM, then SIGKILL after
// reapGrace) and exits when ralph is gone: the control socket reads end
// of file (the kernel closes it when ralph dies or exits), or a signal
// comes (the parent-death signal among them) or twice a second passes
// while its parent is not ralph. When it cannot start a program (the
// directory or the program is missing, the ruleset cannot be enforced),
// or is gone or stops answering, Run starts the program the cold way,
// which reports the failure exactly as before.

// controlEnv, set in a supervisor's environment, names the descriptor of
// its end of the control socket: the supervisor is the persistent one.
const controlEnv = "RALPH_PROC_CONTROL"

// controlFD is the control socket's descriptor in the supervisor: the
// first of cmd.ExtraFiles.
const controlFD = 3

// replyTimeout bounds how long Run waits for the supervisor to say it
// started the program before it gives up on it (ends it and starts the
// program the cold way). The reply follows the program's fork at once;
// only a supervisor stopped or starved of CPU for that long misses it.
var replyTimeout = 30 * time.Second

// Replies of the supervisor after it tried to start a program: one byte,
// then, when it started, the pid (4 bytes) and start time (8 bytes,
// big-endian).
const (
	replyStarted byte = 0
	replyFailed  byte = 1
	startedLen        = 1 + 4 + 8
)

// supervisor is ralph's handle on its persistent supervisor.
type supervisor struct {
	cmd   *exec.Cmd
	ctl   int // ralph's end of the control socket
	users int // Runs handing it a program or waiting for one
	gone  bool
	// idle are connections whose program ended and was reported: the
	// supervisor waits on each for the next program (connection).
	idle []int
}

// persistent holds the supervisor Run hands programs to.
var persistent struct {
	sync.Mutex
	sup *supervisor
	off bool
}

// persistentStarts counts the programs started on the persistent
// supervisor, and connections the connections made to it (for tests).
var persistentStarts, connections atomic.Int64

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

// KeepSupervisor sets whether Run hands programs to the one persistent
// supervisor (the default). Turning it off ends that supervisor once the
// programs running on it have ended, and every program then gets a
// supervisor of its own, re-executed for it: bench/gap measures both.
func KeepSupervisor(on bool) {
	persistent.Lock()
	persistent.off = !on
	sup := persistent.sup
	if on || sup == nil {
		persistent.Unlock()
		return
	}
	retire(sup, false)
	idle := sup.users == 0
	persistent.Unlock()
	if idle {
		sup.close()
	}
}

// runtimeVars are the variables of ralph's environment the supervisor
// gets: what Go's runtime reads, so that it runs as a cold supervisor
// would (a coverage build, for one, warns on exit without GOCOVERDIR).
var runtimeVars = []string{"GOCOVERDIR", "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK"}

// acquire returns the persistent supervisor, started if there is none,
// counting the caller as a user until it calls release; nil when there
// is none to be had.
func acquire() *supervisor {
	persistent.Lock()
	defer persistent.Unlock()
	if persistent.off || !canSupervise.Load() {
		return nil
	}
	if persistent.sup == nil {
		sup, err := startSupervisor()
		if err != nil {
			return nil
		}
		persistent.sup = sup
	}
	persistent.sup.users++
	return persistent.sup
}

// retire stops handing programs to sup, and kills it when it is broken.
// The caller holds persistent's lock; the last Run using sup closes it.
func retire(sup *supervisor, kill bool) {
	if persistent.sup == sup {
		persistent.sup = nil
	}
	sup.gone = true
	if kill {
		_ = sup.cmd.Process.Kill()
	}
}

// release ends one use of sup, retiring it when it is broken; the last
// use of a retired supervisor closes it.
func release(sup *supervisor, broken bool) {
	persistent.Lock()
	if broken {
		retire(sup, true)
	}
	sup.users--
	last := sup.gone && sup.users == 0
	persistent.Unlock()
	if last {
		sup.close()
	}
}

// close closes ralph's end of sup's control socket and of its idle
// connections, which ends it, and reaps it.
func (sup *supervisor) close() {
	persistent.Lock()
	idle := sup.idle
	sup.idle = nil
	persistent.Unlock()
	for _, c := range idle {
		syscall.Close(c)
	}
	syscall.Close(sup.ctl)
	_ = sup.cmd.Wait()
}

// maxIdle is how many idle connections ralph keeps to its supervisor: as
// many as programs it runs at once, mostly one.
const maxIdle = 4

// connection returns a connection for one program: an idle one, or a new
// one (connect).
func (sup *supervisor) connection() (int, error) {
	persistent.Lock()
	if n := len(sup.idle); n > 0 {
		c := sup.idle[n-1]
		sup.idle = sup.idle[:n-1]
		persistent.Unlock()
		return c, nil
	}
	persistent.Unlock()
	return sup.connect()
}

// keepIdle keeps conn, whose program's end the supervisor reported, for
// the next program, unless sup is retired or keeps enough: then it is
// closed, which ends the supervisor's wait on it.
func (sup *supervisor) keepIdle(conn int) {
	persistent.Lock()
	if !sup.gone && len(sup.idle) < maxIdle {
		sup.idle = append(sup.idle, conn)
		conn = -1
	}
	persistent.Unlock()
	if conn >= 0 {
		syscall.Close(conn)
	}
}

// startSupervisor starts the persistent supervisor. Its environment holds
// what marks it as one and Go's runtime variables only: it must not carry
// ralph's secrets.
func startSupervisor() (*supervisor, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "supervisor-control")
	defer child.Close()
	env := []string{supervisorEnv + "=" + strconv.Itoa(os.Getpid()), controlEnv + "=" + strconv.Itoa(controlFD)}
	for _, name := range runtimeVars {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	cmd := &exec.Cmd{
		Path: supervisorPath(),
		Args: []string{supervisorArg0},
		Env:  env,
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
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	// A supervisor that stopped reading makes Run give up on it, not
	// wait for ever.
	timeout(fds[0], syscall.SO_SNDTIMEO, replyTimeout)
	return &supervisor{cmd: cmd, ctl: fds[0]}, nil
}

// launched is a program started on the persistent supervisor.
type launched struct {
	pid   int
	start uint64 // the leader's start time, clock ticks after boot
	// wait waits for the program to end and returns its exit code (-1
	// when a signal killed it, or its supervisor died) and the
	// supervisor's pid, the subreaper of what left the program's group:
	// 0 when the supervisor did not report the end, and a supervisor
	// that died since is found out by the scan (descendants).
	wait func() (code, reaper int)
}

// startPersistent starts the program of s (path, with the prepared env
// and output pipes) on the persistent supervisor; ok is false when there
// is none or it could not start the program, and the caller starts it
// the cold way.
func startPersistent(s Spec, path string, env []string, stdout, stderr *os.File) (l launched, ok bool) {
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return launched{}, false
	}
	msg, err := encodeProgram(program{Path: path, Dir: dir, Argv: s.Argv, Env: dedupEnv(env), Ruleset: s.Ruleset != nil})
	if err != nil {
		return launched{}, false
	}
	sup := acquire()
	if sup == nil {
		return launched{}, false
	}
	conn, err := sup.connection()
	if err != nil {
		release(sup, true)
		return launched{}, false
	}
	stdin, feed, err := stdinFor(s.Stdin)
	if err != nil {
		syscall.Close(conn)
		release(sup, false)
		return launched{}, false
	}
	files := []*os.File{stdin, stdout, stderr}
	if s.Ruleset != nil {
		files = append(files, s.Ruleset)
	}
	sent := time.Now()
	pid, start, err := sendProgram(conn, msg, files)
	if stdin != s.Stdin {
		stdin.Close()
	}
	if err != nil {
		if feed != nil {
			feed.Close()
		}
		syscall.Close(conn)
		// A program that did not start leaves the supervisor as it was;
		// one that did not answer is broken, and is killed.
		broken := !errors.Is(err, errNotStarted)
		release(sup, broken)
		if tok := lookupEnv(env, tokenEnv); broken && tok != "" {
			// It may have started the program before it stopped
			// answering: end that copy, so that the cold start is the
			// only one.
			endCarrying(tok, 0, sent, 0)
		}
		return launched{}, false
	}
	persistentStarts.Add(1)
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
	stop := watchEnd(sup, pid)
	wait := func() (int, int) {
		code, err := readEnd(conn)
		stop()
		if err == nil {
			sup.keepIdle(conn)
		} else {
			syscall.Close(conn)
		}
		release(sup, err != nil)
		reaper := sup.cmd.Process.Pid
		if err != nil {
			reaper = 0
		}
		// A process that left the group may hold standard input open
		// without reading it: stop feeding it soon after the end, as
		// exec.Cmd's WaitDelay does on the cold path.
		select {
		case <-fed:
		case <-time.After(PipeGrace):
			feed.Close()
			<-fed
		}
		return code, reaper
	}
	return launched{pid: pid, start: start, wait: wait}, true
}

// connect makes the connection for one program and sends its other end
// to the supervisor.
func (sup *supervisor) connect() (int, error) {
	connections.Add(1)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer syscall.Close(fds[1])
	for {
		err = syscall.Sendmsg(sup.ctl, []byte{'p'}, syscall.UnixRights(fds[1]), nil, syscall.MSG_NOSIGNAL)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		syscall.Close(fds[0])
		return -1, err
	}
	timeout(fds[0], syscall.SO_SNDTIMEO, replyTimeout)
	return fds[0], nil
}

// timeout sets the socket option opt (SO_RCVTIMEO or SO_SNDTIMEO) of
// fd to d; zero means none.
func timeout(fd, opt int, d time.Duration) {
	tv := syscall.NsecToTimeval(int64(d))
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv)
}

// errNotStarted is sendProgram's error when the supervisor answered that it
// could not start the program.
var errNotStarted = errors.New("supervisor: the program did not start")

// sendProgram sends the program and its descriptors on conn and waits
// for the supervisor to say it started the program.
func sendProgram(conn int, msg []byte, files []*os.File) (pid int, start uint64, err error) {
	// A connection used before waited for its program's end for ever.
	timeout(conn, syscall.SO_RCVTIMEO, replyTimeout)
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	oob := syscall.UnixRights(fds...)
	for len(msg) > 0 {
		n, err := syscall.SendmsgN(conn, msg, oob, nil, syscall.MSG_NOSIGNAL)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		msg, oob = msg[n:], nil
	}
	var reply [startedLen]byte
	if err := readFull(conn, reply[:1]); err != nil {
		return 0, 0, err
	}
	if reply[0] != replyStarted {
		return 0, 0, errNotStarted
	}
	if err := readFull(conn, reply[1:]); err != nil {
		return 0, 0, err
	}
	// The end may come after any time.
	timeout(conn, syscall.SO_RCVTIMEO, 0)
	return int(binary.BigEndian.Uint32(reply[1:])), binary.BigEndian.Uint64(reply[5:]), nil
}

// readEnd reads the wait status the supervisor sends when the program
// has ended, and returns its exit code as os.ProcessState.ExitCode does.
// When the supervisor died first it returns -1, as a cold supervisor
// killed with its program reads, and an error.
func readEnd(conn int) (int, error) {
	var b [4]byte
	if err := readFull(conn, b[:]); err != nil {
		return -1, err
	}
	ws := syscall.WaitStatus(binary.BigEndian.Uint32(b[:]))
	if !ws.Exited() {
		return -1, nil
	}
	return ws.ExitStatus(), nil
}

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Read(fd, b)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
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

// lookupEnv returns the value of key in env ("KEY=value" entries, the
// last one winning), "" when env has none.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// dedupEnv returns env with one entry per variable, the last one given,
// as os/exec passes an environment: the supervisor's ForkExec passes env
// as it is, and a C program's getenv, Node's among them, takes the first
// of two entries (ralph's own HOME, not the one the agent's Env sets).
func dedupEnv(env []string) []string {
	seen := make(map[string]bool, len(env))
	out := make([]string, 0, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		key, _, _ := strings.Cut(env[i], "=")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, env[i])
	}
	slices.Reverse(out)
	return out
}

// statusGrace is how long after its program ended ralph waits for the
// supervisor to report the end before it gives up on the supervisor.
var statusGrace = 3 * time.Second

// watchEnd watches the program pid that sup started, through a pidfd:
// once the program has ended, sup must report its end within
// statusGrace, or it is killed, so that the end is read as -1 (as when
// a cold supervisor is killed with its program). The program is sup's
// child and can stop it (kill -STOP $PPID): then no end would ever come,
// and Run would wait for ever, through every timeout (they kill the
// program's group, which sup is not in). stop ends the watch. Without
// pidfds (Linux before 5.3) nothing is watched.
func watchEnd(sup *supervisor, pid int) (stop func()) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return func() {}
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(pidfd)
		return func() {}
	}
	stopped := make(chan struct{})
	grace := statusGrace // read here: the watch may outlive its Run
	go func() {
		defer func() {
			unix.Close(p[0])
			unix.Close(pidfd)
		}()
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if fds[0].Revents == 0 {
			return // stopped before the program ended
		}
		select {
		case <-stopped:
		case <-time.After(grace):
			persistent.Lock()
			retire(sup, true)
			persistent.Unlock()
		}
	}()
	// The watch ends on its own once stopped: Run does not wait for it.
	return func() {
		close(stopped)
		unix.Close(p[1])
	}
}

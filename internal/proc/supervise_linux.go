package proc

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// supervisorArg0 is the supervisor's argv[0]; with supervisorEnv set to
// the parent's pid it tells a starting binary to act as a supervisor.
const (
	supervisorArg0 = "ralph-supervisor"
	supervisorEnv  = "RALPH_PROC_SUPERVISOR"
)

// reapGrace is how long the supervisor gives its group between SIGTERM
// and SIGKILL when its parent has died.
const reapGrace = 300 * time.Millisecond

// canSupervise is set by RunSupervisor: this binary, re-executed, acts as
// a supervisor instead of running its main.
var canSupervise atomic.Bool

// RunSupervisor acts as a supervisor and exits with the program's status
// when Run started this process as one (argv[0] is "ralph-supervisor" and
// RALPH_PROC_SUPERVISOR is set). Otherwise it returns at once, and from
// then on Run starts programs under a supervisor: this binary re-executed.
// A binary that runs programs through Run calls it first thing in main, a
// test binary in TestMain; without the call, Run starts programs directly
// in their own group, which a ralph killed outright leaves behind.
func RunSupervisor() {
	canSupervise.Store(true)
	parent, ok := os.LookupEnv(supervisorEnv)
	if !ok || len(os.Args) == 0 || os.Args[0] != supervisorArg0 {
		return
	}
	pid, _ := strconv.Atoi(parent)
	if ctl, ok := os.LookupEnv(controlEnv); ok {
		fd, err := strconv.Atoi(ctl)
		if err != nil {
			os.Exit(1)
		}
		os.Exit(serve(pid, fd))
	}
	if len(os.Args) < 3 {
		return
	}
	os.Exit(supervise(pid, os.Args[1], os.Args[2:]))
}

// command returns the command that runs path (named argv[0], with
// argv[1:]) under a supervisor: this binary re-executed, leading a new
// session and process group, with a parent-death signal. Before
// RunSupervisor was called it is directCommand's.
func command(path string, argv, env []string) *exec.Cmd {
	if !canSupervise.Load() {
		return directCommand(path, argv, env)
	}
	args := append([]string{supervisorArg0, path}, argv...)
	return &exec.Cmd{
		Path: supervisorPath(),
		Args: args,
		Env:  append(env, supervisorEnv+"="+strconv.Itoa(os.Getpid())),
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:    true,
			Pdeathsig: syscall.SIGTERM,
		},
	}
}

// directCommand returns the command that runs path directly, leading a new
// session and process group.
func directCommand(path string, argv, env []string) *exec.Cmd {
	return &exec.Cmd{Path: path, Args: argv, Env: env, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
}

// supervise runs path with argv in the supervisor's own process group,
// with the supervisor's standard streams, and returns the exit status to
// exit with. When its parent (ralph) dies it ends the whole group: SIGTERM,
// then SIGKILL after reapGrace, which also ends the supervisor.
func supervise(parent int, path string, argv []string) int {
	// The group signals ralph sends reach the program directly; the
	// supervisor itself only watches for its parent's death.
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	if os.Getppid() != parent {
		// Ralph died before the parent-death signal was armed.
		return 1
	}
	_ = os.Unsetenv(supervisorEnv)
	g := guardParent(parent, sigs)
	if err := confineThread(); err != nil {
		os.Stderr.WriteString(supervisorArg0 + ": " + err.Error() + "\n")
		return 126
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Env: os.Environ()}
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString(argv[0] + ": " + err.Error() + "\n")
		if errors.Is(err, syscall.EACCES) {
			return 126
		}
		return 127
	}
	return g.wait(cmd)
}

// notifySignals sends to sigs the signals that end a process by default
// and that a supervisor must survive while its parent lives.
func notifySignals(sigs chan<- os.Signal) {
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
}

// guard ends the supervisor's group, the supervisor included, once the
// supervisor's parent is gone: it checks on every signal and twice a
// second (the parent-death signal can be lost: it follows the thread that
// started the supervisor). It watches from a goroutine of its own, so
// that the supervisor's main goroutine waits for the program itself and
// passes its end on without a hop to another thread.
type guard struct {
	done    chan struct{} // closed when the program has ended
	reaping atomic.Bool
}

// guardParent starts guarding the supervisor whose parent is parent.
func guardParent(parent int, sigs <-chan os.Signal) *guard {
	g := &guard{done: make(chan struct{})}
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-g.done:
				return
			case <-sigs:
			case <-tick.C:
			}
			if os.Getppid() != parent {
				g.reaping.Store(true)
				reapOwnGroup(g.done)
			}
		}
	}()
	return g
}

// wait waits for the started program cmd to end and returns the exit
// status to exit with.
func (g *guard) wait(cmd *exec.Cmd) int {
	_ = cmd.Wait()
	close(g.done)
	if g.reaping.Load() {
		// The guard ends the rest of the group, then this process.
		select {}
	}
	return exitStatus(cmd.ProcessState)
}

// reapOwnGroup ends the supervisor's group, itself included.
func reapOwnGroup(done <-chan struct{}) {
	pgid := syscall.Getpgrp()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(reapGrace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	os.Exit(1)
}

// exitStatus turns the program's end into the supervisor's: the same exit
// code, or death by the same signal.
func exitStatus(ps *os.ProcessState) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ps.ExitCode()
	}
	sig := ws.Signal()
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond)
	return 128 + int(sig)
}

package proc

import (
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a program leads a new process group (for CTRL_BREAK) and is
// put in a job object right after it starts, so everything it starts is
// in the job too. The job is made to kill its processes when its last
// handle closes: ralph holds that handle, so when ralph dies, however it
// dies, the system ends the job, which is what the supervisor does on
// Linux. A process started in the moment between the program's start and
// its assignment to the job is not in it.

func command(path string, argv, env []string) *exec.Cmd { return directCommand(path, argv, env) }

func directCommand(path string, argv, env []string) *exec.Cmd {
	return &exec.Cmd{Path: path, Args: argv, Env: env, SysProcAttr: &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}}
}

// group is a started program's job and process handles. Holding the
// process handle keeps its pid from being reused while Run runs.
type group struct {
	job, process windows.Handle
}

// groups holds the groups Run has started, by the leader's pid.
var groups sync.Map // int → group

// adopt puts the process pid, just started, in a new job object that
// kills its processes when closed. When that fails, killGroup ends the
// process alone.
func adopt(pid int) {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return
	}
	g := group{process: p}
	if job, err := newJob(); err == nil {
		if windows.AssignProcessToJobObject(job, p) == nil {
			g.job = job
		} else {
			windows.CloseHandle(job)
		}
	}
	groups.Store(pid, g)
}

// newJob creates a job object whose processes die when its last handle
// is closed.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// terminate asks the group to stop with CTRL_BREAK (which reaches console
// programs that share ralph's console; Windows has no SIGTERM), then ends
// the whole job after grace, and returns the leader's wait error.
func terminate(pid int, grace time.Duration, exited <-chan error) error {
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
	select {
	case err := <-exited:
		return err
	case <-time.After(grace):
		killGroup(pid)
		return <-exited
	}
}

// killGroup ends every process of pid's job (the process alone when it
// has no job) and lets go of its handles.
func killGroup(pid int) {
	v, ok := groups.LoadAndDelete(pid)
	if !ok {
		return
	}
	g := v.(group)
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
		windows.CloseHandle(g.job)
	} else {
		_ = windows.TerminateProcess(g.process, 1)
	}
	windows.CloseHandle(g.process)
}

//go:build !linux

package proc

import "os"

// Without Linux's parent-death signal and /proc, a process runs directly
// in its own group (a session on Unix, a job object on Windows), and no
// group is ever judged orphaned.
const supervisorEnv = "RALPH_PROC_SUPERVISOR"

// RunSupervisor does nothing here: there is no supervisor to be.
func RunSupervisor() {}

func startTime(pid int) (uint64, bool) { return 0, false }

// Self returns this process's pid; its start time is unknown here.
func Self() (pid int, start uint64) { return os.Getpid(), 0 }

func pipeHolders(files ...*os.File) []Escapee { return nil }

// noProcs knows nothing of other processes: every owner looks alive.
type noProcs struct{}

func (noProcs) Stat(pid int) (uint64, int, bool)    { return 0, 0, true }
func (noProcs) Members(pgid int) []int              { return nil }
func (noProcs) HasToken(pid int, token string) bool { return false }

func processes() ProcessTable { return noProcs{} }

// controlEnv marks the persistent supervisor on Linux; it is only removed
// here.
const controlEnv = "RALPH_PROC_CONTROL"

// SuperviseAs does nothing here: there is no supervisor to start.
func SuperviseAs(path string) {}

// KeepSupervisor does nothing here: there is no supervisor to keep.
func KeepSupervisor(on bool) {}

func startPersistent(s Spec, path string, env []string, stdout, stderr *os.File) (launched, bool) {
	return launched{}, false
}

// launched is a program started on Linux's persistent supervisor.
type launched struct {
	pid   int
	start uint64
	wait  func() (code, reaper int)
}

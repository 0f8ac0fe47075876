//go:build !linux

package git

// gitRunsIn cannot tell here: known is false, and no lock is removed.
func gitRunsIn(dirs []string) (running, known bool) { return false, false }

// seesEveryProcess is false here: no process list is read.
func seesEveryProcess() bool { return false }

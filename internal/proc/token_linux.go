package proc

import (
	"os"
	"syscall"
)

// Carrying lists the live processes whose environment carries the group
// token, wherever they are: a process that left its group with setsid
// still carries it.
func (procfs) Carrying(token string) []int {
	if token == "" {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		if st, ok := readStat(pid); ok && !st.Zombie && environHas(pid, tokenEnv+"="+token) {
			out = append(out, pid)
		}
	}
	return out
}

// endCarrying kills with SIGKILL every process still carrying token (the
// processes of a group that has ended which left it with setsid) and
// returns them. It looks again after each kill, for what they started
// meanwhile.
func endCarrying(token string) []Escapee {
	var out []Escapee
	for range 5 {
		pids := (procfs{}).Carrying(token)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			e := Escapee{PID: pid, Command: cmdline(pid)}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				out = append(out, e)
			}
		}
	}
	return out
}

package proc

import (
	"os"
	"syscall"
	"time"
)

// Carrying lists the live processes whose environment carries the group
// token, wherever they are: a process that left its group with setsid
// still carries it.
func (procfs) Carrying(token string) []int {
	pids, _ := carrying(token)
	return pids
}

// carrying is Carrying, and how many live processes it could not read
// the environment of: one in the middle of an exec has none for a moment.
func carrying(token string) (found []int, unsure int) {
	if token == "" {
		return nil, 0
	}
	self := os.Getpid()
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.Zombie {
			continue
		}
		switch has, read := environHas(pid, tokenEnv+"="+token); {
		case has:
			found = append(found, pid)
		case !read:
			unsure++
		}
	}
	return found, unsure
}

// endCarrying kills with SIGKILL every process still carrying token (the
// processes of a group that has ended which left it with setsid) and
// returns them. It looks again after each kill, for what they started
// meanwhile, and, for a moment, while a process's environment could not
// be read (it was in the middle of an exec).
func endCarrying(token string) []Escapee {
	var out []Escapee
	for try := 0; try < 40; try++ {
		pids, unsure := carrying(token)
		if len(pids) == 0 {
			if unsure == 0 || try >= 20 {
				break
			}
			time.Sleep(5 * time.Millisecond)
			continue
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

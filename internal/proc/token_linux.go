package proc

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// Carrying lists the live processes whose environment carries the group
// token, wherever they are: a process that left its group with setsid
// still carries it.
func (procfs) Carrying(token string) []int {
	pids, _ := carrying(token, 0)
	return pids
}

// carrying is Carrying for the processes started at or after since
// (clock ticks after boot), and how many of them, ours, it could not read
// the environment of: one in the middle of an exec has none for a moment.
func carrying(token string, since uint64) (found []int, unsure int) {
	if token == "" {
		return nil, 0
	}
	self, uid := os.Getpid(), os.Getuid()
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		if st, ok := readStat(pid); !ok || !mayCarry(st, since) {
			continue
		}
		switch has, read := environHas(pid, tokenEnv+"="+token); {
		case has:
			found = append(found, pid)
		case !read && ownedBy(pid, uid):
			unsure++
		}
	}
	return found, unsure
}

// mayCarry reports whether the process st describes may carry a token
// handed out at since: a live program started at or after it. A kernel
// thread's environment reads empty, as that of a process in the middle of
// an exec does, and new ones start all the time: taken for one of ours
// (ralph running as root) each cost endCarrying its waits, 5 to 100 ms
// between two agent sessions.
func mayCarry(st procStat, since uint64) bool {
	return !st.Zombie && !st.Kernel && st.Start >= since
}

// ownedBy reports whether process pid runs as user uid.
func ownedBy(pid, uid int) bool {
	info, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// endCarrying kills with SIGKILL every process still carrying token (the
// processes of a group that has ended which left it with setsid), among
// those started at or after since, and returns them. It looks again after
// each kill, for what they started meanwhile, and, for a moment, while the
// environment of one of ours could not be read (it was in the middle of
// an exec).
func endCarrying(token string, since uint64) []Escapee {
	var out []Escapee
	for try := 0; try < 40; try++ {
		pids, unsure := carrying(token, since)
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

package proc

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Carrying lists the live processes whose environment carries the group
// token, wherever they are: a process that left its group with setsid
// still carries it.
func (procfs) Carrying(token string) []int {
	pids, _ := carrying(token, 0, time.Time{}, 0)
	return pids
}

// carrying is Carrying for the processes started at or after since
// (clock ticks after boot), and how many of them, ours, it could not read
// the environment of: one in the middle of an exec has none for a moment.
// A process whose /proc entry is older than older (when not zero) is
// known to have started before since without reading its stat. When
// reaper is not 0, it is the child subreaper the group was started under
// (the persistent supervisor): what left the group is below it, wherever
// its parents went, and only its descendants are looked at instead of
// every process on the machine.
func carrying(token string, since uint64, older time.Time, reaper int) (found []int, unsure int) {
	if token == "" {
		return nil, 0
	}
	self, uid := os.Getpid(), os.Getuid()
	var candidates []int
	ok := false
	if reaper != 0 {
		candidates, ok = descendants(reaper)
	}
	if !ok {
		candidates = pids()
	}
	for _, pid := range candidates {
		if pid == self || (!older.IsZero() && existedBefore(pid, older)) {
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

// existedBefore reports whether process pid's /proc entry was made
// before t, which proves the process older: the kernel stamps the entry
// with the time it first looks it up, never before the process starts,
// and a new process under a reused pid gets a new entry. One stat of a
// directory costs a fraction of reading and parsing /proc/PID/stat, which
// ending a group's escapees otherwise does for every process on the
// machine.
func existedBefore(pid int, t time.Time) bool {
	var st syscall.Stat_t
	if syscall.Stat("/proc/"+strconv.Itoa(pid), &st) != nil {
		return false
	}
	return time.Unix(st.Ctim.Unix()).Before(t)
}

// ctimeSlack is how much earlier than the group's start a /proc entry
// must be stamped to prove its process older: more than the coarse clock
// the kernel stamps with lags the real one by (a tick).
const ctimeSlack = time.Second

// provenOlder is the instant before which a /proc entry's stamp proves a
// process older than a group started at started, when the wall clock has
// moved wall and the monotonic clock mono since: zero (no proof, read
// every process's stat) when the wall clock was set back meanwhile, so
// that a new process's stamp could read older than the group.
func provenOlder(started time.Time, mono, wall time.Duration) time.Time {
	if mono-wall >= ctimeSlack/2 || !stampsTrusted() {
		return time.Time{}
	}
	return started.Add(-ctimeSlack)
}

// loaded is when this package initialised, in a process that started
// moments before.
var loaded = time.Now()

// stampsTrusted reports whether this system's /proc stamps its entries as
// existedBefore trusts, judged by this process's own entry: stamped no
// earlier than a moment before the process initialised. A procfs that
// stamped entries with an older time (boot time, zero) would make every
// process read as older than any group, and no escapee would be ended.
var stampsTrusted = sync.OnceValue(func() bool {
	return !existedBefore(os.Getpid(), loaded.Add(-ctimeSlack))
})

// endCarrying kills with SIGKILL every process still carrying token (the
// processes of a group that has ended which left it with setsid), among
// those started at or after since (clock ticks after boot; the group's
// leader started after started, on the wall clock) and, when reaper is
// not 0, below the subreaper reaper, and returns them. It
// looks again after each kill, for what they started meanwhile, and, for
// a moment, while the environment of one of ours could not be read (it
// was in the middle of an exec).
func endCarrying(token string, since uint64, started time.Time, reaper int) []Escapee {
	var out []Escapee
	killed := map[int]bool{}
	deadline := time.Now().Add(endWait)
	for try := 0; try < 40; try++ {
		older := provenOlder(started, time.Since(started), time.Now().Round(0).Sub(started.Round(0)))
		pids, unsure := carrying(token, since, older, reaper)
		pids = slices.DeleteFunc(pids, func(pid int) bool { return killed[pid] })
		if len(pids) == 0 {
			if unsure == 0 || try >= 20 {
				break
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		var dying []int
		for _, pid := range pids {
			e := Escapee{PID: pid, Command: cmdline(pid)}
			if pidfd, ok := killNow(pid); ok {
				killed[pid] = true
				out = append(out, e)
				if pidfd >= 0 {
					dying = append(dying, pidfd)
				}
			}
		}
		awaitEnd(dying, deadline)
	}
	return out
}

// endWait bounds how long endCarrying waits, in all, for the processes
// it killed to end: a SIGKILL is only delivered when the process next
// runs, and one in an uninterruptible sleep may take longer.
const endWait = time.Second

// killNow sends SIGKILL to pid, through a pidfd when the kernel has them,
// and returns the pidfd to wait for its end on, -1 without one.
func killNow(pid int) (pidfd int, ok bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, syscall.Kill(pid, syscall.SIGKILL) == nil
	}
	if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) != nil {
		syscall.Close(fd)
		return -1, false
	}
	return fd, true
}

// awaitEnd waits until deadline at most for the processes whose pidfds
// are pidfds to end, so that a process said to be ended has stopped
// running (best effort), and closes the pidfds.
func awaitEnd(pidfds []int, deadline time.Time) {
	if len(pidfds) == 0 {
		return
	}
	defer func() {
		for _, fd := range pidfds {
			syscall.Close(fd)
		}
	}()
	left := make([]unix.PollFd, 0, len(pidfds))
	for _, fd := range pidfds {
		left = append(left, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	for len(left) > 0 {
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		n, err := unix.Poll(left, int(wait.Milliseconds())+1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		running := left[:0]
		for _, p := range left {
			if p.Revents == 0 {
				running = append(running, p)
			}
		}
		left = running
	}
}

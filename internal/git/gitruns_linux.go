package git

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// gitRunsIn reports whether a git process runs with its working
// directory in one of dirs (git moves to the top of the working tree it
// works in, or into the git directory), read from /proc. known is false
// when ralph cannot see every process: /proc unreadable, or ralph in a
// process namespace of its own (a container), where a git of the host's
// does not show. A process whose name or place cannot be read (another
// user's, under hidepid) counts as a git that runs there.
func gitRunsIn(dirs []string) (running, known bool) {
	if !seesEveryProcess() {
		return false, false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	self := strconv.Itoa(os.Getpid())
	var tops []os.FileInfo
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			return true, true // a place that cannot be told: keep the lock
		}
		tops = append(tops, fi)
	}
	for _, e := range entries {
		pid := e.Name()
		if pid == "" || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		git, err := isGit(pid)
		if errors.Is(err, fs.ErrNotExist) {
			continue // it ended meanwhile
		}
		if err != nil {
			return true, true
		}
		if !git || parent(pid) == self {
			continue // this ralph's own (a long-running hash-object) hold no lock it waits on
		}
		in, err := cwdWithin(pid, tops)
		if errors.Is(err, fs.ErrNotExist) {
			continue // it ended meanwhile
		}
		if err != nil || in {
			return true, true
		}
	}
	return false, true
}

// cwdWithin reports whether process pid's working directory is one of
// tops or below one, by the directories' identity (device and inode),
// walking up from the directory itself: a path would miss a repository
// reached through a bind mount or another mount namespace.
func cwdWithin(pid string, tops []os.FileInfo) (bool, error) {
	p := filepath.Join("/proc", pid, "cwd")
	prev, err := os.Stat(p)
	if err != nil {
		return false, err
	}
	for range 256 {
		for _, t := range tops {
			if os.SameFile(prev, t) {
				return true, nil
			}
		}
		p += "/.."
		up, err := os.Stat(p)
		if err != nil {
			return false, err
		}
		if os.SameFile(up, prev) {
			return false, nil // the root
		}
		prev = up
	}
	return false, nil
}

// isGit reports whether process pid runs git: by its name, or by the
// program it runs (a git started through a link of another name).
func isGit(pid string) (bool, error) {
	comm, err := os.ReadFile(filepath.Join("/proc", pid, "comm"))
	if err != nil {
		return false, err
	}
	if name := strings.TrimSpace(string(comm)); name == "git" || strings.HasPrefix(name, "git-") {
		return true, nil
	}
	exe, err := os.Readlink(filepath.Join("/proc", pid, "exe"))
	if err != nil {
		// A kernel thread has none; another user's cannot be read: its
		// name said it is not git.
		return false, nil
	}
	base := filepath.Base(exe)
	return base == "git" || strings.HasPrefix(base, "git-") || strings.Contains(exe, "/git-core/"), nil
}

// The inode numbers the kernel gives its first pid and user namespaces
// (PROC_PID_INIT_INO, PROC_USER_INIT_INO).
const (
	initPidNS  = "pid:[4026531836]"
	initUserNS = "user:[4026531837]"
)

// seesEveryProcess reports whether this process sees every process of
// the machine in /proc: it is in the first pid namespace (a container,
// which mounts a /proc of its own, is not), and /proc does not hide
// other users' processes (hidepid) from it; root in the first user
// namespace sees them whatever hidepid says.
func seesEveryProcess() bool {
	if ns, err := os.Readlink("/proc/self/ns/pid"); err != nil || ns != initPidNS {
		return false
	}
	if ns, err := os.Readlink("/proc/self/ns/user"); err == nil && ns == initUserNS && os.Geteuid() == 0 {
		return true
	}
	m, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(m)) {
		if f := strings.Fields(line); len(f) > 4 && f[4] == "/proc" && strings.Contains(line, "hidepid=") {
			return false
		}
	}
	return true
}

// parent returns the parent's pid of process pid, "" when unknown.
func parent(pid string) string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return ""
	}
	// "pid (comm) state ppid …": comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndex(s, ") ")
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

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
		cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return true, true
		}
		for _, d := range dirs {
			if within(cwd, d) {
				return true, true
			}
		}
	}
	return false, true
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

// seesEveryProcess reports whether this process sees every process of
// the machine in /proc: it is in the first process namespace (its status
// lists one pid, its own there), and /proc does not hide other users'
// processes (hidepid) from it.
func seesEveryProcess() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok && len(strings.Fields(rest)) != 1 {
			return false
		}
	}
	if os.Geteuid() == 0 {
		return true
	}
	m, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(m)) {
		if f := strings.Fields(line); len(f) > 4 && f[4] == "/proc" && strings.Contains(line, "hidepid=") && !strings.Contains(line, "hidepid=0") && !strings.Contains(line, "hidepid=off") {
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

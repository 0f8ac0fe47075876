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
// works in, or into the git directory), read from /proc; known is false
// when /proc cannot be read.
func gitRunsIn(dirs []string) (running, known bool) {
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
		comm, err := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		if err != nil {
			continue // gone, or not ours to read
		}
		if name := strings.TrimSpace(string(comm)); name != "git" && !strings.HasPrefix(name, "git-") {
			continue
		}
		if parent(pid) == self {
			continue // this ralph's own (a long-running hash-object): not what holds the lock
		}
		cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // it ended meanwhile
		}
		if err != nil {
			return true, true // a git whose place cannot be told (another user's): it may be this repository's
		}
		for _, d := range dirs {
			if within(cwd, d) {
				return true, true
			}
		}
	}
	return false, true
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

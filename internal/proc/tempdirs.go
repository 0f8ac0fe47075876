package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MkdirTemp makes a private directory in the temporary directory named
// for this process: prefix, the pid, a dash and a random part. SweepTemp
// removes those of processes that are gone.
func MkdirTemp(prefix string) (string, error) {
	return os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
}

// SweepTemp removes the directories MkdirTemp made with prefix for
// processes that no longer exist: a process killed outright never
// removed its own.
func SweepTemp(prefix string) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || Alive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

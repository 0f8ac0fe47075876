package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperBlockedGit is not a test: run by TestGitEndsWithKilledRalph
// in a process of its own, it plays a ralph whose git call blocks (on a
// FIFO no one writes), until it is killed.
func TestHelperBlockedGit(t *testing.T) {
	fifo := os.Getenv("GIT_TEST_BLOCK_ON")
	if fifo == "" {
		t.Skip("helper process only")
	}
	_, _ = Run(context.Background(), filepath.Dir(fifo), "hash-object", fifo)
	os.Exit(0)
}

// A ralph killed with SIGKILL during a rollback or a save must not leave
// its git running: that git would go on rewriting the tree and hold its
// lock files after ralph is gone.
func TestGitEndsWithKilledRalph(t *testing.T) {
	dir := newRepo(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ralph := exec.Command(os.Args[0], "-test.run=^TestHelperBlockedGit$")
	ralph.Env = append(os.Environ(), "GIT_TEST_BLOCK_ON="+fifo)
	if err := ralph.Start(); err != nil {
		t.Fatal(err)
	}
	gitPID := 0
	for deadline := time.Now().Add(30 * time.Second); gitPID == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = ralph.Process.Kill()
			t.Fatal("the helper never started git")
		}
		gitPID = childRunning(ralph.Process.Pid, fifo)
	}
	_ = ralph.Process.Kill()
	_ = ralph.Wait()
	for deadline := time.Now().Add(30 * time.Second); alive(gitPID); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(gitPID, syscall.SIGKILL)
			t.Fatalf("git (pid %d) still runs after the ralph that started it was killed", gitPID)
		}
	}
}

// childRunning returns the pid of the process whose parent is ppid and
// whose command line holds arg, or 0.
func childRunning(ppid int, arg string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		if cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); strings.Contains(string(cmd), arg) {
			return pid
		}
	}
	return 0
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

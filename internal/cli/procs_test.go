package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readPID waits up to 20 seconds for file to hold a pid and returns it.
func readPID(t *testing.T, file string, out *syncBuffer) int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(file)
		if err != nil || !bytes.HasSuffix(data, []byte("\n")) {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			return pid
		}
	}
	t.Fatalf("%s was never written; ralph said:\n%s", file, out.String())
	return 0
}

// killAtEnd kills pid when the test ends, whatever happened.
func killAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	})
}

// startWithChild starts bin with args in dir and waits for the pid a
// process it starts writes to dir/pidFile. Both are killed when the test
// ends. It returns ralph, its output and the pid.
func startWithChild(t *testing.T, bin, dir, pidFile string, args ...string) (*exec.Cmd, *syncBuffer, int) {
	t.Helper()
	run := exec.Command(bin, args...)
	run.Dir = dir
	out := &syncBuffer{}
	run.Stdout, run.Stderr = out, out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, run.Process.Pid)
	pid := readPID(t, filepath.Join(dir, pidFile), out)
	killAtEnd(t, pid)
	return run, out, pid
}

// waitExit waits up to limit for run to exit, failing the test with why
// it might not have and what ralph said otherwise.
func waitExit(t *testing.T, run *exec.Cmd, out *syncBuffer, limit time.Duration, why string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	select {
	case <-exited:
	case <-time.After(limit):
		if why != "" {
			why = " (" + why + ")"
		}
		t.Fatalf("ralph still runs %s later%s:\n%s", limit, why, out.String())
	}
}

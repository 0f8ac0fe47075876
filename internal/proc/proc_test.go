//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunCollectsLinesAndExitCode(t *testing.T) {
	var lines []string
	res, err := Run(context.Background(), Spec{
		Argv:   []string{"sh", "-c", "cat; echo two; echo oops >&2; exit 3"},
		Stdin:  strings.NewReader("one\n"),
		OnLine: func(l string) { lines = append(lines, l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", res.ExitCode)
	}
	if got := strings.Join(lines, ","); got != "one,two" {
		t.Errorf("lines = %q, want one,two", got)
	}
	if res.Stderr != "oops" {
		t.Errorf("stderr = %q, want oops", res.Stderr)
	}
}

func TestRunMissingProgram(t *testing.T) {
	_, err := Run(context.Background(), Spec{Argv: []string{"ralph-no-such-program-xyz"}})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("err = %v, want exec.ErrNotFound", err)
	}
}

// A hung program that started a child of its own is killed with its whole
// process group when the idle timeout passes: no process survives.
func TestRunIdleTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	start := time.Now()
	_, err := Run(context.Background(), Spec{
		Argv:        []string{"sh", "-c", `sleep 300 & echo $! > "$0"; echo started; wait`, pidFile},
		IdleTimeout: 300 * time.Millisecond,
		KillGrace:   200 * time.Millisecond,
	})
	if !errors.Is(err, ErrIdle) {
		t.Fatalf("err = %v, want ErrIdle", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to kill an idle process", d)
	}
	assertGone(t, pidFile)
}

func TestRunCancelKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Spec{
		Argv:      []string{"sh", "-c", `trap "" TERM; sleep 300 & echo $! > "$0"; while :; do echo tick; sleep 0.05; done`, pidFile},
		KillGrace: 200 * time.Millisecond,
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	assertGone(t, pidFile)
}

// A leader that exits normally while a background child still runs must
// not leave the child behind (nor hang on its open stdout).
func TestRunLeaderExitReapsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Spec{
			Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$0"; echo bye`, pidFile},
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run hung on a background child holding stdout")
	}
	assertGone(t, pidFile)
}

func TestEnvironScrubsNestedAgentVars(t *testing.T) {
	nested := []string{"CLAUDECODE", "QWEN_CODE", "QWEN_CODE_SESSION_ID", "COPILOT_CLI", "COPILOT_AGENT_SESSION_ID"}
	for _, v := range nested {
		t.Setenv(v, "1")
	}
	t.Setenv("RALPH_KEEP_ME", "yes")
	env := strings.Join(Environ("EXTRA=1"), "\n")
	for _, v := range nested {
		if strings.Contains(env, v+"=") {
			t.Errorf("%s leaked into the child environment", v)
		}
	}
	if !strings.Contains(env, "RALPH_KEEP_ME=yes") || !strings.Contains(env, "EXTRA=1") {
		t.Error("ordinary variables were lost")
	}
}

// Variables named in Unset do not reach the child; the rest of the
// environment and Env do.
func TestRunUnset(t *testing.T) {
	t.Setenv("RALPH_TEST_SECRET", "sk-secret")
	t.Setenv("RALPH_TEST_OTHER", "sk-other")
	t.Setenv("RALPH_KEEP_ME", "yes")
	var lines []string
	_, err := Run(context.Background(), Spec{
		Argv:   []string{"sh", "-c", `echo "${RALPH_TEST_SECRET:-unset} ${RALPH_TEST_OTHER:-unset} $RALPH_KEEP_ME $EXTRA"`},
		Env:    []string{"EXTRA=1", "RALPH_TEST_OTHER=given"},
		Unset:  []string{"RALPH_TEST_SECRET", "RALPH_TEST_OTHER"},
		OnLine: func(l string) { lines = append(lines, l) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines, "\n"); got != "unset given yes 1" {
		t.Errorf("child saw %q, want %q", got, "unset given yes 1")
	}
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("child pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		// A zombie not yet reaped by init still answers kill(0); check state.
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("child process %d is still running", pid)
}

// The child's PWD names its working directory, not ralph's: Node and Bun
// programs take their workspace from it.
func TestRunSetsPWDToDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PWD", "/somewhere/else")
	var pwd string
	_, err := Run(context.Background(), Spec{Argv: []string{"env"}, Dir: dir, OnLine: func(l string) {
		if v, ok := strings.CutPrefix(l, "PWD="); ok {
			pwd = v
		}
	}})
	if err != nil || pwd != dir {
		t.Errorf("child PWD = %q (%v), want %q", pwd, err, dir)
	}
}

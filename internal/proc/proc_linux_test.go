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

// escapeScript starts a child that leaves the group with setsid and keeps
// standard output open, writing its pid to $0 first.
const escapeScript = `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$0" & `

// killPIDFile kills the process whose pid is in file when the test ends.
func killPIDFile(t *testing.T, file string) {
	t.Cleanup(func() {
		if data, err := os.ReadFile(file); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

func waitFile(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", file)
	return 0
}

// A leader that exits while a child that escaped its group holds standard
// output: Run returns soon after and names the escaped process.
func TestRunEscapedChildAfterExit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "escaped.pid")
	killPIDFile(t, pidFile)
	done := make(chan Result, 1)
	go func() {
		res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", escapeScript + `while [ ! -s "$0" ]; do sleep 0.01; done; echo bye`, pidFile}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var res Result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run hung on a child that escaped with setsid holding stdout")
	}
	pid := waitFile(t, pidFile)
	if res.Escaped == nil {
		t.Fatal("Result.Escaped is nil; want the escaped process reported")
	}
	if len(res.Escaped) != 1 || res.Escaped[0].PID != pid || !strings.Contains(res.Escaped[0].Command, "sleep 300") {
		t.Errorf("Escaped = %+v, want pid %d running sleep 300", res.Escaped, pid)
	}
	if note := res.EscapeNote(); !strings.Contains(note, "pid "+strconv.Itoa(pid)) {
		t.Errorf("EscapeNote = %q", note)
	}
}

// Cancellation and the idle timeout end Run although an escaped child
// holds both pipes.
func TestRunEscapedChildCancelAndIdle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		idle    time.Duration
		want    error
	}{
		{"cancel", 500 * time.Millisecond, 0, context.DeadlineExceeded},
		{"idle", 0, 500 * time.Millisecond, ErrIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "escaped.pid")
			killPIDFile(t, pidFile)
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			done := make(chan error, 1)
			var res Result
			go func() {
				var err error
				res, err = Run(ctx, Spec{
					Argv:        []string{"sh", "-c", escapeScript + `exec 2>&1; sleep 300`, pidFile},
					Stdin:       strings.NewReader(strings.Repeat("x", 1<<20)),
					IdleTimeout: tc.idle,
					KillGrace:   200 * time.Millisecond,
				})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Run hung")
			}
			if res.Escaped == nil {
				t.Error("escape not reported")
			}
		})
	}
}

// The start hook hears of every group Run starts before it starts it,
// with the token its members will carry and no process carrying it yet,
// then with an identity that matches the running leader, and hears when
// it ends.
func TestStartHook(t *testing.T) {
	var before, got Started
	var ended *Result
	ctx := WithStartHook(context.Background(), func(s Started) Recording {
		before = s
		if s.PGID != 0 || s.Token == "" {
			t.Errorf("before the start: %+v, want a token and no group", s)
		}
		if pids := Processes().Carrying(s.Token); len(pids) != 0 {
			t.Errorf("processes %v carry the token before the start", pids)
		}
		return Recording{
			Started: func(s Started) {
				got = s
				if start, ok := startTime(s.PGID); !ok || start != s.LeaderStart {
					t.Errorf("leader start %d, /proc says %d (%v)", s.LeaderStart, start, ok)
				}
			},
			Done: func(r Result) { ended = &r },
		}
	})
	var lines []string
	_, err := Run(ctx, Spec{
		Argv:   []string{"sh", "-c", `echo "$RALPH_PROC_TOKEN"; ps -o pgid= -p $$; exit 4`},
		OnLine: func(l string) { lines = append(lines, strings.TrimSpace(l)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Argv0 != "sh" || got.Token != before.Token || got.PGID == 0 {
		t.Fatalf("Started = %+v, before the start %+v", got, before)
	}
	if len(lines) != 2 || lines[0] != got.Token || lines[1] != strconv.Itoa(got.PGID) {
		t.Errorf("child printed %q, want token %s and group %d", lines, got.Token, got.PGID)
	}
	if ended == nil || ended.ExitCode != 4 {
		t.Errorf("done called with %+v, want exit code 4", ended)
	}
}

// A program killed by a signal is reported as such through the
// supervisor.
func TestRunSignalledExitCode(t *testing.T) {
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", `kill -9 $$`}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != -1 {
		t.Errorf("exit code = %d, want -1 (killed by a signal)", res.ExitCode)
	}
}

// helperEnv makes the test binary run TestHelperRun as a stand-in ralph:
// it runs the command in $RALPH_PROC_HELPER_ARGV through Run and blocks.
const helperEnv = "RALPH_PROC_HELPER_SCRIPT"

func TestHelperRun(t *testing.T) {
	script := os.Getenv(helperEnv)
	if script == "" {
		return
	}
	_, _ = Run(context.Background(), Spec{Argv: []string{"sh", "-c", script}})
	os.Exit(0)
}

// When ralph dies by SIGKILL, the supervisor ends the agent's whole group,
// a grandchild that ignores SIGTERM included, within a second.
func TestParentDeathEndsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	killPIDFile(t, pidFile)
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperRun$")
	helper.Env = append(os.Environ(), helperEnv+`=sh -c 'trap "" TERM; echo $$ > `+pidFile+`; while :; do sleep 0.1; done' & trap "" TERM; wait`)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := waitFile(t, pidFile)
	st, ok := readStat(pid)
	if !ok {
		t.Fatal("grandchild not running")
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	killed := time.Now()
	for {
		members := processes().Members(st.PGID)
		if len(members) == 0 {
			break
		}
		if time.Since(killed) > time.Second {
			t.Fatalf("group %d still has %v a second after its ralph was killed", st.PGID, members)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A program is run under a supervisor only once the binary said it can be
// one (RunSupervisor, which TestMain calls): before that, its parent is
// this process, not a re-executed copy of it.
func TestRunSupervisedOnlyAfterRunSupervisor(t *testing.T) {
	if got := ppidOf(t); got == os.Getpid() {
		t.Errorf("after RunSupervisor the program's parent is the test binary itself, want a supervisor")
	}
	canSupervise.Store(false)
	defer canSupervise.Store(true)
	if got := ppidOf(t); got != os.Getpid() {
		t.Errorf("before RunSupervisor the program's parent is %d, want the test binary %d", got, os.Getpid())
	}
}

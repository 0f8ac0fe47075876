package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// warmStandby makes sure a standby supervisor waits for the next program
// and returns its pid.
func warmStandby(t *testing.T) int {
	t.Helper()
	KeepStandby(true)
	for range 2 {
		standbys.Lock()
		sb := standbys.idle
		standbys.Unlock()
		if sb != nil {
			return sb.cmd.Process.Pid
		}
		// A supervised Run leaves one behind.
		if _, err := Run(context.Background(), Spec{Argv: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no standby after a supervised Run")
	return 0
}

// coldStart makes the test's programs start without a standby.
func coldStart(t *testing.T) {
	KeepStandby(false)
	t.Cleanup(func() { KeepStandby(true) })
}

// The program of a Run starts on the supervisor that was waiting before
// Run was called, and Run leaves another one waiting for the next.
func TestStandbyRunsNextProgram(t *testing.T) {
	want := warmStandby(t)
	before := standbyStarts.Load()
	var line string
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo $PPID"}, OnLine: func(l string) { line = l }})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if line != strconv.Itoa(want) {
		t.Errorf("the program's parent is %s, want the standby %d started before Run", line, want)
	}
	if got := standbyStarts.Load() - before; got != 1 {
		t.Errorf("%d programs started on a standby, want 1", got)
	}
	if next := warmStandby(t); next == want {
		t.Errorf("the used standby %d is still idle", want)
	}
}

// Through a standby a program gets its arguments, environment, directory
// and standard input; its exit code or the signal that killed it comes
// back as on a cold start; it leads a new group with its supervisor, with
// the group's token.
func TestStandbyPassesProgramThrough(t *testing.T) {
	dir := t.TempDir()
	script := `printf '%s|' "$1" "$PWD" "$(pwd -P)" "$FOO" "$RALPH_PROC_STANDBY" "$RALPH_PROC_SUPERVISOR"; cat; echo; ps -o pgid= -p $$; ` +
		`[ -e /proc/$$/fd/3 ] && echo leaked-fd; exit "$2"`
	for _, tc := range []struct {
		name     string
		argv     []string
		wantCode int
	}{
		{"exit 0", []string{"sh", "-c", script, "sh", "a b", "0"}, 0},
		{"exit 4", []string{"sh", "-c", script, "sh", "a b", "4"}, 4},
		{"killed", []string{"sh", "-c", `kill -9 $$`}, -1},
		{"terminated", []string{"sh", "-c", `kill -TERM $$; sleep 5`}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, warm := range []bool{false, true} {
				if warm {
					warmStandby(t)
				} else {
					coldStart(t)
				}
				before := standbyStarts.Load()
				var out []string
				var started Started
				ctx := WithStartHook(context.Background(), func(s Started) func(Result) { started = s; return nil })
				res, err := Run(ctx, Spec{
					Argv: tc.argv, Dir: dir, Env: []string{"FOO=bar"}, Stdin: strings.NewReader("in put"),
					OnLine: func(l string) { out = append(out, strings.TrimSpace(l)) },
				})
				if !warm {
					KeepStandby(true)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, want := standbyStarts.Load()-before, map[bool]int64{false: 0, true: 1}[warm]; got != want {
					t.Fatalf("warm %v: %d programs started on a standby, want %d", warm, got, want)
				}
				if res.ExitCode != tc.wantCode {
					t.Errorf("warm %v: exit code %d, want %d (stderr %q)", warm, res.ExitCode, tc.wantCode, res.Stderr)
				}
				if tc.wantCode < 0 {
					continue
				}
				want := []string{"a b|" + dir + "|" + dir + "|bar|||in put", strconv.Itoa(started.PGID)}
				if strings.Join(out, "\n") != strings.Join(want, "\n") {
					t.Errorf("warm %v: the program printed %q, want %q", warm, out, want)
				}
			}
		})
	}
}

// A program the standby cannot start (its directory is gone) fails as it
// does on a cold start, and the standby does not stay behind.
func TestStandbyFailedStartFallsBack(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	coldStart(t)
	_, coldErr := Run(context.Background(), Spec{Argv: []string{"true"}, Dir: missing})
	KeepStandby(true)
	pid := warmStandby(t)
	_, err := Run(context.Background(), Spec{Argv: []string{"true"}, Dir: missing})
	if err == nil || coldErr == nil || err.Error() != coldErr.Error() {
		t.Errorf("through a standby: %v; cold: %v", err, coldErr)
	}
	if alive(pid) {
		t.Errorf("the standby %d that failed to start the program still runs", pid)
	}
}

func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && !st.Zombie
}

// TestHelperStandby is a stand-in ralph: it runs a program, so that a
// standby waits, writes the standby's pid to $RALPH_PROC_HELPER_STANDBY
// and then runs the script in $RALPH_PROC_HELPER_SCRIPT on it, and blocks.
func TestHelperStandby(t *testing.T) {
	script, file := os.Getenv(helperEnv), os.Getenv("RALPH_PROC_HELPER_STANDBY")
	if script == "" || file == "" {
		return
	}
	pid := warmStandby(t)
	os.WriteFile(file, []byte(strconv.Itoa(pid)+"\n"), 0o644)
	_, _ = Run(context.Background(), Spec{Argv: []string{"sh", "-c", script}})
	os.Exit(0)
}

// When ralph dies by SIGKILL, the program running on a standby and its
// whole group end, and so does the next standby waiting idle: nothing is
// left.
func TestStandbyDiesWithParent(t *testing.T) {
	dir := t.TempDir()
	pidFile, standbyFile := filepath.Join(dir, "grandchild.pid"), filepath.Join(dir, "standby.pid")
	killPIDFile(t, pidFile)
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperStandby$")
	helper.Env = append(os.Environ(), "RALPH_PROC_HELPER_STANDBY="+standbyFile,
		helperEnv+`=sh -c 'trap "" TERM; echo $$ > `+pidFile+`; while :; do sleep 0.1; done' & trap "" TERM; wait`)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	used := waitFile(t, standbyFile)
	killPIDFile(t, standbyFile)
	grandchild := waitFile(t, pidFile)
	st, ok := readStat(grandchild)
	if !ok || st.PGID != used {
		t.Fatalf("the program's group is %d (running %v), want the standby's %d", st.PGID, ok, used)
	}
	// The next standby starts while the program runs.
	var idle []int
	deadline := time.Now().Add(5 * time.Second)
	for len(idle) == 0 && time.Now().Before(deadline) {
		idle = standbysOf(helper.Process.Pid, used)
		time.Sleep(10 * time.Millisecond)
	}
	if len(idle) == 0 {
		t.Fatal("no idle standby started beside the running program")
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	killed := time.Now()
	for {
		left := append(processes().Members(used), idle...)
		left = slicesDeleteDead(left)
		if len(left) == 0 {
			break
		}
		if time.Since(killed) > time.Second {
			t.Fatalf("%v still run a second after their ralph was killed", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// standbysOf lists the children of parent running as an idle standby
// (other than skip).
func standbysOf(parent, skip int) []int {
	var out []int
	for _, pid := range pids() {
		if pid == skip {
			continue
		}
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil || !strings.Contains(string(data), "\nPPid:\t"+strconv.Itoa(parent)+"\n") {
			continue
		}
		if has, _ := environHas(pid, standbyEnv+"="+strconv.Itoa(controlFD)); has {
			out = append(out, pid)
		}
	}
	return out
}

func slicesDeleteDead(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// A standby that is never used ends when ralph's end of its control
// socket closes, as it does when ralph exits.
func TestStandbyEndsWhenControlCloses(t *testing.T) {
	warmStandby(t)
	sb := takeStandby()
	syscall.Close(sb.ctl)
	ended := make(chan error, 1)
	go func() { ended <- sb.cmd.Wait() }()
	select {
	case <-ended:
		if code := sb.cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("the standby exited with %d, want 1", code)
		}
	case <-time.After(5 * time.Second):
		killGroup(sb.cmd.Process.Pid)
		<-ended
		t.Fatal("the standby still waits after its control socket closed")
	}
}

// A standby that died while it waited (killed, as by the OOM killer) is
// not used: the program starts the cold way.
func TestStandbyDeadFallsBack(t *testing.T) {
	pid := warmStandby(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before := standbyStarts.Load()
	var line string
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo $PPID; exit 3"}, OnLine: func(l string) { line = l }})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("run: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	if line == strconv.Itoa(pid) || line == strconv.Itoa(os.Getpid()) || standbyStarts.Load() != before {
		t.Errorf("the program's parent is %s (dead standby %d, test %d); want a cold supervisor", line, pid, os.Getpid())
	}
	if st, ok := readStat(pid); ok {
		t.Errorf("the dead standby %d was not reaped: %+v", pid, st)
	}
}

// Programs run at once each get a supervisor of their own, one of them
// the standby.
func TestStandbyConcurrentRuns(t *testing.T) {
	warmStandby(t)
	before := standbyStarts.Load()
	const n = 8
	parents := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			var line string
			_, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo $PPID; sleep 0.2"}, OnLine: func(l string) { line = l }})
			parents <- line
			errs <- err
		}()
	}
	seen := map[string]bool{}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
		seen[<-parents] = true
	}
	if len(seen) != n {
		t.Errorf("%d programs had %d distinct supervisors: %v", n, len(seen), seen)
	}
	if got := standbyStarts.Load() - before; got < 1 {
		t.Errorf("no program started on the standby")
	}
}

// A standby, started before ralph knows what it will run, holds none of
// ralph's environment (its secrets) while it waits: only what marks it
// as a standby.
func TestStandbyEnvironmentHoldsNoSecret(t *testing.T) {
	t.Setenv("RALPH_TEST_SECRET", "s3cret")
	KeepStandby(false)
	pid := warmStandby(t)
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(strings.TrimRight(string(data), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		if name != supervisorEnv && name != standbyEnv && !slices.Contains(runtimeVars, name) {
			t.Errorf("the standby's environment holds %s", name)
		}
	}
}

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// supervisorPID makes sure the persistent supervisor runs and returns
// its pid.
func supervisorPID(t *testing.T) int {
	t.Helper()
	KeepSupervisor(true)
	if _, err := Run(context.Background(), Spec{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	persistent.Lock()
	defer persistent.Unlock()
	if persistent.sup == nil {
		t.Fatal("no persistent supervisor after a supervised Run")
	}
	return persistent.sup.cmd.Process.Pid
}

// coldStart makes the test's programs start each on a supervisor of its
// own, re-executed for it.
func coldStart(t *testing.T) {
	KeepSupervisor(false)
	t.Cleanup(func() { KeepSupervisor(true) })
}

// ppidOf runs `echo $PPID` and returns what it printed.
func ppidOf(t *testing.T) int {
	t.Helper()
	var line string
	if _, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "echo $PPID"}, OnLine: func(l string) { line = l }}); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("sh printed %q", line)
	}
	return pid
}

// Every program runs on the one supervisor: no re-execution per program.
func TestPersistentRunsEveryProgram(t *testing.T) {
	want := supervisorPID(t)
	before := persistentStarts.Load()
	for range 3 {
		if got := ppidOf(t); got != want {
			t.Errorf("the program's parent is %d, want the persistent supervisor %d", got, want)
		}
	}
	if got := persistentStarts.Load() - before; got != 3 {
		t.Errorf("%d programs started on the persistent supervisor, want 3", got)
	}
	coldStart(t)
	if got := ppidOf(t); got == want || got == os.Getpid() {
		t.Errorf("cold, the program's parent is %d (persistent %d, test %d), want a supervisor of its own", got, want, os.Getpid())
	}
}

// Through the persistent supervisor a program gets its arguments,
// environment, directory and standard input, and none of the supervisor's
// descriptors or variables; it leads a new session and process group; its
// exit code or the signal that killed it comes back as on a cold start.
func TestPersistentPassesProgramThrough(t *testing.T) {
	dir := t.TempDir()
	script := `printf '%s|' "$1" "$PWD" "$(pwd -P)" "$FOO" "$RALPH_PROC_CONTROL" "$RALPH_PROC_SUPERVISOR"; cat; echo; ps -o pgid=,sid= -p $$; ` +
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
				if !warm {
					KeepSupervisor(false)
				}
				before := persistentStarts.Load()
				var out []string
				var started Started
				ctx := WithStartHook(context.Background(), func(Started) Recording {
					return Recording{Started: func(s Started) { started = s }}
				})
				res, err := Run(ctx, Spec{
					Argv: tc.argv, Dir: dir, Env: []string{"FOO=bar"}, Stdin: strings.NewReader("in put"),
					OnLine: func(l string) { out = append(out, strings.Join(strings.Fields(l), " ")) },
				})
				KeepSupervisor(true)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := persistentStarts.Load()-before, map[bool]int64{false: 0, true: 1}[warm]; got != want {
					t.Fatalf("warm %v: %d programs started on the persistent supervisor, want %d", warm, got, want)
				}
				if res.ExitCode != tc.wantCode {
					t.Errorf("warm %v: exit code %d, want %d (stderr %q)", warm, res.ExitCode, tc.wantCode, res.Stderr)
				}
				if tc.wantCode < 0 {
					continue
				}
				// Cold, the group's leader is the program's supervisor,
				// in the same group and session; warm, the program.
				group := strconv.Itoa(started.PGID)
				want := []string{"a b|" + dir + "|" + dir + "|bar|||in put", group + " " + group}
				if strings.Join(out, "\n") != strings.Join(want, "\n") {
					t.Errorf("warm %v: the program printed %q, want %q", warm, out, want)
				}
			}
		})
	}
}

// A program that cannot start fails as it does on a cold start, with the
// same error or the same exit code and message, and the persistent
// supervisor stays for the next program.
func TestPersistentFailedStartFallsBack(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "interp")
	os.WriteFile(noexec, []byte("not a program\n"), 0o644)
	badInterp := filepath.Join(dir, "bad-interp")
	os.WriteFile(badInterp, []byte("#!"+noexec+"\n"), 0o755)
	missingInterp := filepath.Join(dir, "missing-interp")
	os.WriteFile(missingInterp, []byte("#!"+filepath.Join(dir, "none")+"\n"), 0o755)
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"missing directory", Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "gone")}},
		{"missing program", Spec{Argv: []string{filepath.Join(dir, "none")}}},
		{"EACCES", Spec{Argv: []string{badInterp}}},
		{"ENOENT at exec", Spec{Argv: []string{missingInterp}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() string {
				res, err := Run(context.Background(), tc.spec)
				return fmt.Sprintf("err %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
			}
			KeepSupervisor(false)
			cold := run()
			pid := supervisorPID(t)
			if warm := run(); warm != cold {
				t.Errorf("through the persistent supervisor: %s\ncold: %s", warm, cold)
			}
			if got := ppidOf(t); got != pid {
				t.Errorf("the next program's parent is %d, want the same persistent supervisor %d", got, pid)
			}
		})
	}
}

func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && !st.Zombie
}

// supervisorFileEnv names the file TestHelperPersistent writes the
// supervisor's pid to.
const supervisorFileEnv = "RALPH_PROC_HELPER_SUPERVISOR"

// TestHelperPersistent is a stand-in ralph: it runs the script in
// $RALPH_PROC_HELPER_SCRIPT twice at once on the persistent supervisor,
// writes the supervisor's pid to $RALPH_PROC_HELPER_SUPERVISOR, and
// blocks.
func TestHelperPersistent(t *testing.T) {
	script, file := os.Getenv(helperEnv), os.Getenv(supervisorFileEnv)
	if script == "" || file == "" {
		return
	}
	pid := supervisorPID(t)
	for i := range 2 {
		go Run(context.Background(), Spec{Argv: []string{"sh", "-c", script, strconv.Itoa(i)}})
	}
	os.WriteFile(file, []byte(strconv.Itoa(pid)+"\n"), 0o644)
	select {}
}

// When ralph dies by SIGKILL, the persistent supervisor ends the group of
// every program it runs, a grandchild that ignores SIGTERM included, and
// exits: nothing is left.
func TestPersistentDiesWithParent(t *testing.T) {
	dir := t.TempDir()
	supFile := filepath.Join(dir, "supervisor.pid")
	files := []string{filepath.Join(dir, "grandchild0.pid"), filepath.Join(dir, "grandchild1.pid")}
	for _, f := range files {
		killPIDFile(t, f)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperPersistent$")
	helper.Env = append(os.Environ(), supervisorFileEnv+"="+supFile,
		helperEnv+`=sh -c 'trap "" TERM; echo $$ > `+dir+`/grandchild$0.pid; while :; do sleep 0.1; done' $0 & trap "" TERM; wait`)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	sup := waitFile(t, supFile)
	killPIDFile(t, supFile)
	var groups []int
	for _, f := range files {
		st, ok := readStat(waitFile(t, f))
		if !ok {
			t.Fatal("grandchild not running")
		}
		groups = append(groups, st.PGID)
	}
	if groups[0] == groups[1] {
		t.Fatalf("two programs share the group %d", groups[0])
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	killed := time.Now()
	for {
		var left []int
		for _, g := range groups {
			left = append(left, processes().Members(g)...)
		}
		if alive(sup) {
			left = append(left, sup)
		}
		if len(left) == 0 {
			break
		}
		if time.Since(killed) > time.Second {
			t.Fatalf("%v still run a second after their ralph was killed", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Turning the persistent supervisor off ends it.
func TestPersistentEndsWhenTurnedOff(t *testing.T) {
	pid := supervisorPID(t)
	persistent.Lock()
	cmd := persistent.sup.cmd
	persistent.Unlock()
	KeepSupervisor(false)
	defer KeepSupervisor(true)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("the supervisor %d ended with %v, want exit status 1", pid, cmd.ProcessState)
	}
}

// A persistent supervisor that died (killed, as by the OOM killer) is not
// used: the program starts anyway, with its exit code, and the dead one
// is reaped; the next program gets a new persistent supervisor.
func TestPersistentDeadFallsBack(t *testing.T) {
	pid := supervisorPID(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for time.Sleep(10 * time.Millisecond); alive(pid); time.Sleep(10 * time.Millisecond) {
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 3"}})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("run: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	if _, ok := readStat(pid); ok {
		t.Errorf("the dead supervisor %d was not reaped", pid)
	}
	if next := supervisorPID(t); next == pid || ppidOf(t) != next {
		t.Errorf("no new persistent supervisor after %d died", pid)
	}
}

// A persistent supervisor that stopped answering (stopped, as with
// SIGSTOP) is given up: the program starts the cold way with its exit
// code, and the stopped supervisor is killed and reaped.
func TestPersistentStoppedFallsBack(t *testing.T) {
	defer func(d time.Duration) { replyTimeout = d }(replyTimeout)
	replyTimeout = 200 * time.Millisecond
	pid := supervisorPID(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 3"}})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("run: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	if _, ok := readStat(pid); ok {
		t.Errorf("the stopped supervisor %d still runs or was not reaped", pid)
	}
}

// A program whose supervisor is killed while it runs ends as a program
// whose cold supervisor is killed: exit code -1, its group killed.
func TestPersistentKilledWhileRunning(t *testing.T) {
	sup := supervisorPID(t)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	killPIDFile(t, pidFile)
	done := make(chan Result, 1)
	go func() {
		res, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	child := waitFile(t, pidFile)
	_ = syscall.Kill(sup, syscall.SIGKILL)
	select {
	case res := <-done:
		if res.ExitCode != -1 {
			t.Errorf("exit code %d, want -1", res.ExitCode)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still waits after its supervisor was killed")
	}
	for deadline := time.Now().Add(time.Second); alive(child); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d still runs", child)
		}
	}
}

// Programs run at once on the one supervisor each lead a group of their
// own and each get their own exit code.
func TestPersistentConcurrentRuns(t *testing.T) {
	sup := supervisorPID(t)
	const n = 8
	type out struct {
		i, code   int
		ppid, grp string
		pgid      int
		err       error
	}
	outs := make(chan out, n)
	for i := range n {
		go func() {
			var lines []string
			var pgid int
			ctx := WithStartHook(context.Background(), func(Started) Recording {
				return Recording{Started: func(s Started) { pgid = s.PGID }}
			})
			res, err := Run(ctx, Spec{Argv: []string{"sh", "-c", `echo $PPID; ps -o pgid= -p $$; sleep 0.2; exit $0`, strconv.Itoa(i)}, OnLine: func(l string) { lines = append(lines, strings.TrimSpace(l)) }})
			o := out{i: i, code: res.ExitCode, pgid: pgid, err: err}
			if len(lines) == 2 {
				o.ppid, o.grp = lines[0], lines[1]
			}
			outs <- o
		}()
	}
	groups := map[string]bool{}
	for range n {
		o := <-outs
		if o.err != nil || o.code != o.i || o.ppid != strconv.Itoa(sup) || o.grp != strconv.Itoa(o.pgid) {
			t.Errorf("program %d: err %v, exit %d, parent %s (want %d), group %s (want %d)", o.i, o.err, o.code, o.ppid, sup, o.grp, o.pgid)
		}
		groups[o.grp] = true
	}
	if len(groups) != n {
		t.Errorf("%d programs ran in %d groups", n, len(groups))
	}
}

// The persistent supervisor, started before ralph knows what it will
// run, holds none of ralph's environment (its secrets): only what marks
// it as the supervisor.
func TestPersistentEnvironmentHoldsNoSecret(t *testing.T) {
	t.Setenv("RALPH_TEST_SECRET", "s3cret")
	KeepSupervisor(false)
	pid := supervisorPID(t)
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(strings.TrimRight(string(data), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		if name != supervisorEnv && name != controlEnv && !slices.Contains(runtimeVars, name) {
			t.Errorf("the supervisor's environment holds %s", name)
		}
	}
}

// A variable Spec.Env sets over ralph's own reaches the program once,
// with Spec.Env's value: C programs (Node's CLIs among them) take the
// first of two entries, which was ralph's own HOME.
func TestPersistentProgramSeesItsEnvOnce(t *testing.T) {
	t.Setenv("RALPH_TEST_DUP", "ralph's")
	var lines []string
	res, err := Run(context.Background(), Spec{
		Argv:   []string{"env"},
		Env:    []string{"RALPH_TEST_DUP=the program's"},
		OnLine: func(l string) { lines = append(lines, l) },
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("env: %v, exit %d", err, res.ExitCode)
	}
	var got []string
	for _, l := range lines {
		if strings.HasPrefix(l, "RALPH_TEST_DUP=") {
			got = append(got, l)
		}
	}
	if len(got) != 1 || got[0] != "RALPH_TEST_DUP=the program's" {
		t.Errorf("the program's environment holds %q, want the one entry Spec.Env set", got)
	}
}

// A program can stop its supervisor (it is the program's parent) and
// exit, or go on running: its end then never comes through the
// supervisor. Run still returns, the program's end read as -1, once the
// program has ended and the supervisor has not said so within
// statusGrace; the supervisor is killed, and the next program gets a new
// one.
func TestPersistentStoppedByItsProgram(t *testing.T) {
	saved := statusGrace
	statusGrace = 200 * time.Millisecond
	t.Cleanup(func() { statusGrace = saved })
	for _, tc := range []struct {
		name    string
		script  string
		timeout time.Duration // 0: none; the program exits by itself
	}{
		// Each waits for the supervisor's start reply to have gone out
		// first: a supervisor stopped before it is the case
		// TestPersistentStoppedFallsBack covers.
		{"exits", "sleep 1; kill -STOP $PPID; exit 0", 0},
		{"runs on until its timeout", "sleep 1; kill -STOP $PPID; sleep 30", 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			before := persistentStarts.Load()
			done := make(chan Result, 1)
			go func() {
				res, _ := Run(ctx, Spec{Argv: []string{"sh", "-c", tc.script}, KillGrace: 100 * time.Millisecond})
				done <- res
			}()
			var res Result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				persistent.Lock()
				if sup := persistent.sup; sup != nil {
					_ = sup.cmd.Process.Kill()
				}
				persistent.Unlock()
				<-done
				t.Fatal("Run was still waiting 10 s after a program stopped its supervisor")
			}
			if persistentStarts.Load() == before {
				t.Fatal("the program did not run on the persistent supervisor")
			}
			if res.ExitCode != -1 {
				t.Errorf("exit code %d, want -1 (the end was never reported)", res.ExitCode)
			}
			var out []string
			if _, err := Run(context.Background(), Spec{Argv: []string{"echo", "next"}, OnLine: func(l string) { out = append(out, l) }}); err != nil || len(out) != 1 {
				t.Errorf("the next program: %v, %q", err, out)
			}
		})
	}
}

// The persistent supervisor is the subreaper of what leaves a program's
// group: a process that left with setsid and whose parent ended moves to
// it, not to init, so that the group's end finds it below the supervisor
// (without reading every process on the machine), ends it, and the
// supervisor reaps it.
func TestPersistentAdoptsWhatLeftTheGroup(t *testing.T) {
	sup := supervisorPID(t)
	pidFile := filepath.Join(t.TempDir(), "escaped.pid")
	killPIDFile(t, pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		// The subshell that started it ends at once: its parent is gone
		// while the program still runs. It writes its pid once it has
		// left the group.
		res, _ := Run(ctx, Spec{EndEscaped: true, Argv: []string{"sh", "-c",
			`(setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$0" </dev/null >/dev/null 2>&1 &); sleep 300`, pidFile}})
		done <- res
	}()
	pid := waitFile(t, pidFile)
	var st procStat
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, _ = readStat(pid)
		if (st.PPID == sup && st.PGID == pid) || time.Now().After(deadline) {
			break
		}
	}
	if st.PPID != sup {
		t.Fatalf("the process that left the group has parent %d, want the supervisor %d", st.PPID, sup)
	}
	if below, ok := descendants(sup); !ok || !slices.Contains(below, pid) {
		t.Errorf("descendants(supervisor) = %v, %v; want it to hold %d", below, ok, pid)
	}
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not end")
	}
	if !slices.ContainsFunc(res.Ended, func(e Escapee) bool { return e.PID == pid }) {
		t.Errorf("Ended = %+v, want it to hold %d", res.Ended, pid)
	}
	// Ended and reaped: no zombie is left under the supervisor.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			st, _ := readStat(pid)
			t.Fatalf("process %d is still in the process table (zombie %v, parent %d)", pid, st.Zombie, st.PPID)
		}
	}
}

// descendants finds a process's children and theirs, and refuses a
// root that is not a live child of this process.
func TestDescendants(t *testing.T) {
	if _, ok := children(os.Getpid()); !ok {
		t.Skip("this kernel lists no children (CONFIG_PROC_CHILDREN)")
	}
	cmd := exec.Command("sh", "-c", "sleep 300 & sh -c 'sleep 300 & wait' & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		below, ok := descendants(cmd.Process.Pid)
		var sleeps []int
		for _, pid := range below {
			if strings.HasPrefix(cmdline(pid), "sleep 300") {
				sleeps = append(sleeps, pid)
			}
		}
		if ok && len(below) == 3 && len(sleeps) == 2 {
			for _, pid := range sleeps {
				defer syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("descendants = %v, %v; want a shell and two sleeps below %d", below, ok, cmd.Process.Pid)
		}
	}
	// Not this process's child: refused, the caller reads every process.
	if below, ok := descendants(1); ok {
		t.Errorf("descendants(1) = %v, true; want a refusal", below)
	}
	// A root that ended (a zombie, not yet reaped) adopts nothing more.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, _ := readStat(zombie.Process.Pid); st.Zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("true never ended")
		}
	}
	if below, ok := descendants(zombie.Process.Pid); ok {
		t.Errorf("descendants(zombie) = %v, true; want a refusal", below)
	}
}

// With a subreaper named, the scan looks only below it: a process that
// carries the token elsewhere is not its group's.
func TestCarryingLooksOnlyBelowTheReaper(t *testing.T) {
	sup := supervisorPID(t)
	token := newToken()
	pid := startCarrier(t, token)
	if found, _ := carrying(token, 0, time.Time{}, sup); slices.Contains(found, pid) {
		t.Errorf("carrying below the supervisor found %d, a child of the test", pid)
	}
	if found, _ := carrying(token, 0, time.Time{}, 0); !slices.Contains(found, pid) {
		t.Errorf("carrying everywhere = %v, want it to hold %d", found, pid)
	}
}

// A connection whose program ended is kept for the next program, which
// the supervisor then finds waiting: programs one after the other make
// no new connection; a program that did not start leaves its connection
// closed, and the next one makes a new one; programs at once make one
// each, and no more than maxIdle are kept.
func TestPersistentKeepsConnectionsForTheNextProgram(t *testing.T) {
	pid := supervisorPID(t)
	before := connections.Load()
	for range 3 {
		if got := ppidOf(t); got != pid {
			t.Fatalf("the program's parent is %d, want the persistent supervisor %d", got, pid)
		}
	}
	if n := connections.Load() - before; n != 0 {
		t.Errorf("three programs one after the other made %d connections, want none", n)
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"true"}, Dir: filepath.Join(t.TempDir(), "gone")})
	if err == nil && res.ExitCode == 0 {
		t.Fatal("a program in a missing directory ran")
	}
	before = connections.Load()
	if got := ppidOf(t); got != pid {
		t.Fatalf("after a failed start, the program's parent is %d, want the same persistent supervisor %d", got, pid)
	}
	if n := connections.Load() - before; n > 1 {
		t.Errorf("the program after a failed start made %d connections, want at most one", n)
	}

	var wg sync.WaitGroup
	for range maxIdle + 2 {
		wg.Go(func() {
			if _, err := Run(context.Background(), Spec{Argv: []string{"sleep", "0.2"}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	persistent.Lock()
	idle := len(persistent.sup.idle)
	persistent.Unlock()
	if idle > maxIdle {
		t.Errorf("%d idle connections kept, want at most %d", idle, maxIdle)
	}
	if got := ppidOf(t); got != pid {
		t.Errorf("after programs at once, the program's parent is %d, want %d", got, pid)
	}
}

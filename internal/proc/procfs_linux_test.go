package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		ok   bool
		want procStat
	}{
		{"program", "4242 (a (b) c) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 18446744073709551615", true, procStat{PPID: 1, PGID: 4240, Start: 987654}},
		{"zombie", "4243 (sh) Z 1 4240 4240 0 -1 4227084 100 0 0 0 1 2 0 0 20 0 1 0 987655 0 0 18446744073709551615", true, procStat{PPID: 1, PGID: 4240, Start: 987655, Zombie: true}},
		{"kernel thread", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 24 0 0 18446744073709551615", true, procStat{Start: 24, Kernel: true}},
		{"short", "12 (x) Z 1", false, procStat{}},
		{"bad flags", "4242 (a) S 1 4240 4240 0 -1 x 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 0", false, procStat{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := parseStat([]byte(tt.line))
			if ok != tt.ok || st != tt.want {
				t.Errorf("parseStat = %+v %v, want %+v %v", st, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a (b) c) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 18446744073709551615"))
	f.Add([]byte("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 24 0 0 18446744073709551615"))
	f.Add([]byte("12 (x) Z 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, ok := parseStat(data)
		if !ok {
			if st != (procStat{}) {
				t.Errorf("a line that did not parse gave %+v", st)
			}
			return
		}
		// What parsed has a command name and twenty fields after it.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 || len(strings.Fields(string(data[i+1:]))) < 20 {
			t.Errorf("%q parsed without its fields", data)
		}
	})
}

func TestMayCarry(t *testing.T) {
	tests := []struct {
		name string
		st   procStat
		want bool
	}{
		{"started after the leader", procStat{Start: 100}, true},
		{"started with the leader", procStat{Start: 50}, true},
		{"older than the leader", procStat{Start: 49}, false},
		{"zombie", procStat{Start: 100, Zombie: true}, false},
		// Its environment reads empty, as that of one of ours in the
		// middle of an exec does: it must not make endCarrying wait.
		{"kernel thread", procStat{Start: 100, Kernel: true}, false},
	}
	for _, tt := range tests {
		if got := mayCarry(tt.st, 50); got != tt.want {
			t.Errorf("%s: mayCarry = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestReadStatKnowsKernelThreads reads the live process table: the kernel's
// threads (kthreadd and its children) are marked, ralph's own process is not.
func TestReadStatKnowsKernelThreads(t *testing.T) {
	self, ok := readStat(os.Getpid())
	if !ok || self.Kernel || self.Zombie || self.Start == 0 {
		t.Fatalf("readStat(self) = %+v %v, want a live program", self, ok)
	}
	kernel := 0
	for _, pid := range pids() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if pid != 2 && (len(f) < 2 || f[1] != "2") { // kthreadd, or its child
			continue
		}
		if st, ok := readStat(pid); ok {
			if !st.Kernel {
				t.Errorf("kernel thread %d (%s) read as a program", pid, b[:i+1])
			}
			kernel++
		}
	}
	if kernel == 0 {
		t.Skip("no kernel thread is visible here (a PID namespace)")
	}
}

func TestProvenOlder(t *testing.T) {
	started := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		mono, wall time.Duration
		want       time.Time
	}{
		{"clocks agree", 30 * time.Second, 30 * time.Second, started.Add(-ctimeSlack)},
		{"wall clock set forward", 30 * time.Second, time.Hour, started.Add(-ctimeSlack)},
		{"wall clock a little slow", 30 * time.Second, 30*time.Second - 10*time.Millisecond, started.Add(-ctimeSlack)},
		// A process started now could be stamped before the group's
		// start: no proof from stamps, every stat is read.
		{"wall clock set back", 30 * time.Second, 29 * time.Second, time.Time{}},
		{"wall clock set back far", 30 * time.Second, -time.Hour, time.Time{}},
	}
	for _, tt := range tests {
		if got := provenOlder(started, tt.mono, tt.wall); !got.Equal(tt.want) {
			t.Errorf("%s: provenOlder = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestExistedBefore holds the kernel to what the escapee scan trusts: a
// process's /proc entry is never stamped before the process started, and
// a process started after the proof's instant is never taken for older.
func TestExistedBefore(t *testing.T) {
	self := os.Getpid()
	if !existedBefore(self, time.Now().Add(ctimeSlack)) {
		t.Error("this process's /proc entry reads newer than now")
	}
	before := time.Now().Add(-ctimeSlack)
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	if existedBefore(cmd.Process.Pid, before) {
		t.Errorf("a process started now reads as existing before %v", before)
	}
	if existedBefore(1<<22+1, time.Now()) {
		t.Error("a pid with no process reads as an older process")
	}
}

// TestCarryingFindsANewProcessPastOldOnes: with the stamp proof on, the
// scan still finds a process that carries the token and started after the
// group, and skips none it should read.
func TestCarryingFindsANewProcessPastOldOnes(t *testing.T) {
	token := newToken()
	started := time.Now()
	pid := startCarrier(t, token)
	found, _ := carrying(token, 0, started.Add(-ctimeSlack), 0)
	if !slices.Contains(found, pid) {
		t.Errorf("carrying = %v, want it to hold %d", found, pid)
	}
}

// startCarrier starts a child of the test that carries token in its
// environment and sleeps until the test ends, and returns its pid.
func startCarrier(t *testing.T, token string) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), tokenEnv+"="+token)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// TestStampsTrustedHere: Linux's procfs stamps this process's entry after
// it started, so the scan may use the stamps.
func TestStampsTrustedHere(t *testing.T) {
	if !stampsTrusted() {
		t.Error("this process's /proc entry reads stamped before it initialised")
	}
}

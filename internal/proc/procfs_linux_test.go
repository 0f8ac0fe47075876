package proc

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		ok   bool
		want procStat
	}{
		{"program", "4242 (a (b) c) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 18446744073709551615", true, procStat{PGID: 4240, Start: 987654}},
		{"zombie", "4243 (sh) Z 1 4240 4240 0 -1 4227084 100 0 0 0 1 2 0 0 20 0 1 0 987655 0 0 18446744073709551615", true, procStat{PGID: 4240, Start: 987655, Zombie: true}},
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

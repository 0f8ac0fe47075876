package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs ralph's main instead of the tests when the profile test
// re-executes this binary.
func TestMain(m *testing.M) {
	if os.Getenv("RALPH_MAIN_TEST") != "" {
		main()
	}
	os.Exit(m.Run())
}

// ralphMain runs this binary as ralph with args and the extra environment.
func ralphMain(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), append([]string{"RALPH_MAIN_TEST=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestProfileAndTraceOfACommand(t *testing.T) {
	dir := t.TempDir()
	cpu, tr := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "trace.out")
	out, err := ralphMain(t, []string{"RALPH_CPUPROFILE=" + cpu, "RALPH_TRACE=" + tr}, "version")
	if err != nil {
		t.Fatalf("ralph version: %v\n%s", err, out)
	}
	// A CPU profile is a gzipped protocol buffer; a trace starts with its
	// header naming the Go version that wrote it.
	if b, err := os.ReadFile(cpu); err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("the CPU profile is not a gzipped profile (%v): %q", err, firstBytes(b))
	}
	if b, err := os.ReadFile(tr); err != nil || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("the trace has no trace header (%v): %q", err, firstBytes(b))
	}
}

func TestProfileIsNotPassedOn(t *testing.T) {
	// What ralph starts (the agent, gates, the agent's own ralph
	// commands) would write over the run's files.
	for _, v := range []string{"RALPH_CPUPROFILE", "RALPH_TRACE"} {
		if got := envAfterProfile(t, v); got != "" {
			t.Errorf("%s is %q after profile started; want it unset", v, got)
		}
	}
}

// envAfterProfile starts profiling as main does, with only the variable
// name set to a file, and returns that variable afterwards.
func envAfterProfile(t *testing.T, name string) string {
	t.Setenv(name, filepath.Join(t.TempDir(), "out"))
	stop, err := profile()
	if err != nil {
		t.Fatal(err)
	}
	stop()
	return os.Getenv(name)
}

func TestProfileToAnUnwritablePath(t *testing.T) {
	out, err := ralphMain(t, []string{"RALPH_CPUPROFILE=" + filepath.Join(t.TempDir(), "missing", "cpu.prof")}, "version")
	if err == nil {
		t.Fatalf("ralph version wrote a profile into a missing directory:\n%s", out)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ralph: cpu profile: ") {
		t.Errorf("want one line naming the CPU profile, got:\n%s", out)
	}
}

func firstBytes(b []byte) []byte { return b[:min(len(b), 16)] }

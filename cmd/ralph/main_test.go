package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestSupervisorSkipsHeavyInit re-executes this test binary, which links
// what cmd/ralph links, as ralph re-executes itself for every agent and
// gate: a supervisor running true. It must do its work before the
// packages it does not use initialise (their init is paid on every
// iteration): GODEBUG=inittrace=1 lists each package as it initialises.
func TestSupervisorSkipsHeavyInit(t *testing.T) {
	if os.Getenv("RALPH_PROC_SUPERVISOR") != "" {
		// The re-executed binary ran its tests: it did not supervise.
		t.Fatal("the binary started as a supervisor ran as a test binary")
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{
		Path: self,
		Args: []string{"ralph-supervisor", truePath, "true"},
		Env:  append(os.Environ(), "GODEBUG=inittrace=1", "RALPH_PROC_SUPERVISOR="+strconv.Itoa(os.Getpid())),
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("supervisor running true: %v\n%s", err, out)
	}
	inits := strings.Count(string(out), "init ")
	for _, heavy := range []string{"modernc.org/sqlite", "go.temporal.io/sdk", "google.golang.org/grpc ", "github.com/ralph-harness/ralph/internal/cli"} {
		if strings.Contains(string(out), "init "+heavy) {
			t.Errorf("the supervisor initialised %s before supervising (%d packages in all)", heavy, inits)
		}
	}
}

package doctor

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

	"github.com/ralph-harness/ralph/internal/store"
)

// TestEndsAGroupRecordedOnlyBeforeItStarted: a ralph killed, with its
// supervisor, right after it started a group leaves the group on record
// by its token alone (no group id yet); a later ralph still finds what
// carries the token, a server that left the group with setsid included,
// ends it and closes the record.
func TestEndsAGroupRecordedOnlyBeforeItStarted(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A dead ralph: a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef"
	if _, err := st.StartProcGroup(ctx, store.ProcGroup{Token: token, RalphPID: dead.Process.Pid, RalphStart: 1, Argv0: "sh"}); err != nil {
		t.Fatal(err)
	}
	server := exec.Command("setsid", "sleep", "60")
	server.Env = append(os.Environ(), "RALPH_PROC_TOKEN="+token)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	defer server.Process.Kill()
	// Until the process carries the token in /proc.
	deadline := time.Now().Add(5 * time.Second)
	for {
		env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(server.Process.Pid), "environ"))
		if slices.Contains(strings.Split(string(env), "\x00"), "RALPH_PROC_TOKEN="+token) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ended, err := EndOrphans(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) != 1 || !ended[0].Ended || ended[0].Processes != 1 {
		t.Fatalf("ended %+v, want the one server", ended)
	}
	if got := ended[0].String(); strings.Contains(got, "process group 0") {
		t.Errorf("the report names a group id never recorded: %s", got)
	}
	select {
	case err := <-exited:
		if ws, ok := server.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Errorf("the server exited with %v, not by a signal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server still runs")
	}
	if rows, err := st.RunningProcGroups(ctx); err != nil || len(rows) != 0 {
		t.Errorf("records still open: %+v, %v", rows, err)
	}
}

package gate

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A gate whose command starts a process that escapes its group with
// setsid and keeps the output open ends as a failed gate that says so,
// whether the command hangs until its timeout or exits at once (once the
// escaped process has written its pid, so that it has left the group
// before the leader exits and the group is killed).
func TestCommandGateEscapedChild(t *testing.T) {
	for _, tc := range []struct {
		name, tail, msg string
	}{
		{"hangs until the timeout", "sleep 300", "did not finish within 1s"},
		{"exits at once", `while [ ! -s "$0" ]; do sleep 0.01; done; echo started`, "left a process running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			pidFile := filepath.Join(root, "escaped.pid")
			t.Cleanup(func() {
				if data, err := os.ReadFile(pidFile); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			g := Command{GateName: "dev", Timeout: time.Second,
				Argv: []string{"sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$0" & ` + tc.tail, pidFile}}
			done := make(chan Result, 1)
			go func() { done <- g.Check(context.Background(), Env{Root: root}) }()
			var r Result
			select {
			case r = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the gate never ended")
			}
			data, _ := os.ReadFile(pidFile)
			pid := strings.TrimSpace(string(data))
			if r.Status != Fail || !strings.Contains(r.Message, tc.msg) || !strings.Contains(r.Message, "pid "+pid+" (sleep 300) left its process group") {
				t.Errorf("got %s %q, want a failure naming pid %s", r.Status, r.Message, pid)
			}
			if n, _ := strconv.Atoi(pid); running(n) {
				t.Errorf("the escaped pid %s still runs after the gate", pid)
			}
		})
	}
}

// A gate whose command starts a process with setsid that lets go of the
// output (a dev server started in the background) leaves nothing running:
// the process carries the group's token and is ended with the gate,
// whether the gate passes, fails or times out.
func TestCommandGateEndsProcessesThatLeftItsGroup(t *testing.T) {
	for _, tc := range []struct {
		name, tail string
		want       Status
	}{
		{"passes", "exit 0", Pass},
		{"fails", "exit 1", Fail},
		{"times out", "sleep 300", Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			pidFile := filepath.Join(root, "escaped.pid")
			t.Cleanup(func() {
				if data, err := os.ReadFile(pidFile); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			g := Command{GateName: "dev", Timeout: 2 * time.Second,
				Argv: []string{"sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$0" </dev/null >/dev/null 2>&1 &
while [ ! -s "$0" ]; do sleep 0.01; done; ` + tc.tail, pidFile}}
			r := g.Check(context.Background(), Env{Root: root})
			if r.Status != tc.want {
				t.Errorf("status %s (%s), want %s", r.Status, r.Message, tc.want)
			}
			data, _ := os.ReadFile(pidFile)
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatalf("the escaped process never wrote its pid: %q", data)
			}
			if running(pid) {
				t.Errorf("pid %d, started by the gate with setsid, still runs after the gate ended", pid)
			}
		})
	}
}

// running reports whether pid runs (a zombie, waiting for init, does not).
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

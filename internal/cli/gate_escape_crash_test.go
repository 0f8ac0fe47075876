package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running reports whether pid runs (a zombie, waiting for init, does not).
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// A gate starts a server with setsid, letting go of the output, so the
// server is in no group ralph knows; then ralph is killed with SIGKILL.
// The gate's own group dies with ralph, the server does not. It carries
// the gate's process token, so the next ralph resume, or ralph doctor,
// finds it by the token and ends it.
func TestSetsidProcessOfKilledGateEnded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real ralph process")
	}
	bin := buildRalph(t)
	// The first time, the gate starts the server and hangs; once the
	// server's pid is written, the gate passes at once.
	const gateScript = `[ -e escaped.pid ] && exit 0
setsid sh -c 'echo $$ > escaped.pid.tmp; mv escaped.pid.tmp escaped.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &
sleep 300
`
	files := map[string]string{
		"agent.json": `{"iterations": [{"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "done\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}]}`,
		"gate.sh":    gateScript,
		"ralph.toml": "agent = \"script\"\n\n[[gates]]\nname = \"dev-server\"\nrun = [\"sh\", \"gate.sh\"]\ntimeout = \"5m\"\n",
	}
	start := func(t *testing.T) (dir string, server int) {
		dir = gitRepo(t)
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run, out, server := startWithChild(t, bin, dir, "escaped.pid", "run", "--script", "agent.json", "start a server")
		if err := run.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = run.Wait()
		// The gate's supervisor ends the gate's group when ralph dies; the
		// server is outside it.
		time.Sleep(time.Second)
		if !running(server) {
			t.Fatalf("the server (pid %d) died with ralph; nothing left to test:\n%s", server, out.String())
		}
		return dir, server
	}

	t.Run("resume", func(t *testing.T) {
		dir, server := start(t)
		resume := exec.Command(bin, "resume")
		resume.Dir = dir
		got, err := resume.CombinedOutput()
		if err != nil {
			t.Fatalf("resume: %v\n%s", err, got)
		}
		if running(server) {
			t.Errorf("the server a killed gate started with setsid (pid %d) still runs after resume:\n%s", server, got)
		}
		if !strings.Contains(string(got), "ralph: ended sh (process group") {
			t.Errorf("resume did not say it ended the gate's leftover:\n%s", got)
		}
	})

	t.Run("doctor", func(t *testing.T) {
		dir, server := start(t)
		doctor := exec.Command(bin, "doctor")
		doctor.Dir = dir
		got, _ := doctor.CombinedOutput()
		if running(server) {
			t.Errorf("the server a killed gate started with setsid (pid %d) still runs after doctor:\n%s", server, got)
		}
		if !strings.Contains(string(got), "ended sh (process group") {
			t.Errorf("doctor did not report the leftover it ended:\n%s", got)
		}
	})
}

//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/store"
)

// groupOf returns pid's process group from /proc/PID/stat.
func groupOf(t *testing.T, pid int) int {
	return statField(t, pid, 2)
}

// parentOf returns pid's parent from /proc/PID/stat.
func parentOf(t *testing.T, pid int) int {
	return statField(t, pid, 1)
}

// statField returns the numeric field i, counted from 0 after the
// command, of /proc/PID/stat.
func statField(t *testing.T, pid, i int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	n, err := strconv.Atoi(f[i])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// killGroupAtEnd SIGKILLs what is left of group pgid when the test ends.
func killGroupAtEnd(t *testing.T, pgid int) {
	t.Cleanup(func() {
		for _, pid := range proc.Processes().Members(pgid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// An agent that starts `setsid sh -c 'sleep 300' &` keeps ralph's output
// pipe open from outside its process group. Whether the agent is a script's
// shell action or a command agent, Ctrl-C, SIGTERM, the iteration timeout
// and the idle timeout each end ralph within seconds with the documented
// exit code, and the run says a process escaped.
func TestEscapedChildNeverHangsRalph(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signals a real ralph process")
	}
	bin := buildRalph(t)
	// The escaped process writes its pid, then sleeps holding stdout and
	// stderr; the agent itself then sleeps silently.
	const escape = `setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' & echo started; sleep 300`
	script := `{"iterations": [{"actions": [{"tool": "shell", "argv": ["sh", "-c", ` + strconv.Quote(escape) + `]}], "final": "done"}]}`
	agents := []struct {
		name string
		args []string
	}{
		{"script", []string{"--script", "agent.json"}},
		{"command", []string{"--agent", "command", "--command", "sh agent.sh"}},
	}
	ends := []struct {
		name   string
		args   []string
		signal syscall.Signal
		code   int
	}{
		{"SIGINT", nil, syscall.SIGINT, 130},
		{"SIGTERM", nil, syscall.SIGTERM, 130},
		{"iteration timeout", []string{"--iteration-timeout", "2s"}, 0, 3},
		{"idle timeout", []string{"--idle-timeout", "2s"}, 0, 3},
	}
	for _, ag := range agents {
		for _, end := range ends {
			t.Run(ag.name+"/"+end.name, func(t *testing.T) {
				dir := gitRepo(t)
				if err := os.WriteFile(filepath.Join(dir, "agent.json"), []byte(script), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(escape+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				args := append([]string{"run", "--max-iterations", "1"}, ag.args...)
				args = append(append(args, end.args...), "escape the group")
				run, out, escaped := startWithChild(t, bin, dir, "escaped.pid", args...)
				if end.signal != 0 {
					time.Sleep(300 * time.Millisecond)
					if err := run.Process.Signal(end.signal); err != nil {
						t.Fatal(err)
					}
				}
				waitExit(t, run, out, 20*time.Second, "an escaped child holds its pipe")
				if got := run.ProcessState.ExitCode(); got != end.code {
					t.Errorf("exit code %d, want %d:\n%s", got, end.code, out.String())
				}
				if !strings.Contains(out.String(), "pid "+strconv.Itoa(escaped)+" (sleep 300) left its process group") {
					t.Errorf("ralph did not say that pid %d escaped:\n%s", escaped, out.String())
				}
			})
		}
	}
}

// The agent's shell forks a grandchild that ignores SIGTERM. When ralph is
// killed with SIGKILL, nothing of the agent's process group survives it by
// more than a second. When the agent's group outlives ralph anyway (its
// supervisor killed too, as the OOM killer would), the next ralph resume
// ends it, saying so in one line, before it starts a new agent.
func TestKillNineLeavesNoAgentProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a real ralph process")
	}
	bin := buildRalph(t)
	const stubborn = `trap '' TERM; sh -c 'echo $$ > grandchild.pid; exec sleep 300' & wait`
	script := `{"iterations": [
		{"actions": [{"tool": "shell", "argv": ["sh", "-c", ` + strconv.Quote(stubborn) + `]}], "final": "one"},
		{"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "done\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
	]}`
	start := func(t *testing.T) (dir string, run *exec.Cmd, out *syncBuffer, pgid int) {
		dir = gitRepo(t)
		if err := os.WriteFile(filepath.Join(dir, "agent.json"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		run, out, gc := startWithChild(t, bin, dir, "grandchild.pid", "run", "--script", "agent.json", "outlive ralph")
		pgid = groupOf(t, gc)
		killGroupAtEnd(t, pgid)
		if pgid == run.Process.Pid {
			t.Fatalf("the agent runs in ralph's own group %d", pgid)
		}
		return dir, run, out, pgid
	}

	t.Run("parent death", func(t *testing.T) {
		_, run, out, pgid := start(t)
		if err := run.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = run.Wait()
		killed := time.Now()
		for {
			left := proc.Processes().Members(pgid)
			if len(left) == 0 {
				break
			}
			if time.Since(killed) > time.Second {
				t.Fatalf("a second after ralph was killed, group %d still has %v:\n%s", pgid, left, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	// orphan kills ralph and the supervisor of its agent's group as the
	// OOM killer would, and returns what is left of the group.
	orphan := func(t *testing.T) (dir string, run *exec.Cmd, pgid int, left []int) {
		dir, run, out, pgid := start(t)
		// Freeze ralph so it cannot clean up, kill the supervisor (the
		// parent of the group's leader, the agent), then ralph.
		if err := run.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		supervisor := parentOf(t, pgid)
		if supervisor == run.Process.Pid {
			t.Fatalf("the agent %d runs without a supervisor", pgid)
		}
		if err := syscall.Kill(supervisor, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := run.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = run.Wait()
		time.Sleep(1500 * time.Millisecond)
		left = proc.Processes().Members(pgid)
		if len(left) == 0 {
			t.Fatalf("the agent's group died with its supervisor; nothing left to test:\n%s", out.String())
		}
		return dir, run, pgid, left
	}

	t.Run("doctor ends an orphan", func(t *testing.T) {
		dir, run, pgid, left := orphan(t)
		// The script agent needs no CLI on PATH, so doctor's agent check
		// passes wherever the test runs.
		if err := os.WriteFile(filepath.Join(dir, "ralph.toml"), []byte("agent = \"script\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		doctor := exec.Command(bin, "doctor")
		doctor.Dir = dir
		got, err := doctor.CombinedOutput()
		if err != nil {
			t.Fatalf("doctor: %v\n%s", err, got)
		}
		want := regexp.MustCompile(`(?m)^fixed +orphans +` + regexp.QuoteMeta("ended sh (process group "+strconv.Itoa(pgid)+", "+strconv.Itoa(len(left))+" processes, iteration 1) left running by a ralph that died (pid "+strconv.Itoa(run.Process.Pid)+")"))
		if !want.Match(got) {
			t.Errorf("doctor output does not match %q:\n%s", want, got)
		}
		if rest := proc.Processes().Members(pgid); len(rest) != 0 {
			t.Errorf("group %d still has %v after doctor", pgid, rest)
		}
	})

	t.Run("supervisor killed too", func(t *testing.T) {
		dir, run, pgid, left := orphan(t)

		resume := exec.Command(bin, "resume")
		resume.Dir = dir
		got, err := resume.CombinedOutput()
		if err != nil {
			t.Fatalf("resume: %v\n%s", err, got)
		}
		text := string(got)
		line := "ralph: ended sh (process group " + strconv.Itoa(pgid) + ", " + strconv.Itoa(len(left)) + " processes, iteration 1) left running by a ralph that died (pid " + strconv.Itoa(run.Process.Pid) + ")"
		i, j := strings.Index(text, line), strings.Index(text, "resuming task 1")
		if i < 0 || j < 0 || i > j {
			t.Errorf("resume did not end the orphaned group first, in one line %q:\n%s", line, text)
		}
		if strings.Count(text, "left running by a ralph that died") != 1 {
			t.Errorf("want one line about the orphaned group:\n%s", text)
		}
		if rest := proc.Processes().Members(pgid); len(rest) != 0 {
			t.Errorf("group %d still has %v after resume", pgid, rest)
		}
		if !strings.Contains(text, "completed") {
			t.Errorf("resume did not complete:\n%s", text)
		}

		// The records say the group ended, and the next run finds nothing.
		ctx := context.Background()
		st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
		if err != nil {
			t.Fatal(err)
		}
		running, err := st.RunningProcGroups(ctx)
		st.Close()
		if err != nil || len(running) != 0 {
			t.Errorf("groups still recorded as running: %+v %v", running, err)
		}
	})
}

// A gate whose command starts `setsid sh -c 'sleep 300' &` holding its
// output, then hangs, times out as a failed gate that names the escaped
// process; the run ends with gate-failures instead of hanging.
func TestGateEscapedChildTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a real ralph process")
	}
	bin := buildRalph(t)
	dir := gitRepo(t)
	files := map[string]string{
		"agent.json": `{"iterations": [{"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "done\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}]}`,
		"ralph.toml": `[limits]
gate_failures = 1

[[gates]]
name = "dev-server"
run = ["sh", "-c", "setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' & sleep 300"]
timeout = "2s"
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, out, escaped := startWithChild(t, bin, dir, "escaped.pid", "run", "--script", "agent.json", "start a server")
	waitExit(t, run, out, 30*time.Second, "")
	if got := run.ProcessState.ExitCode(); got != 6 {
		t.Errorf("exit code %d, want 6 (gate-failures):\n%s", got, out.String())
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	task, err := st.LatestTask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.GateResults(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range results {
		if r.Gate == "dev-server" && r.Status == "fail" && strings.Contains(r.Message, "did not finish within 2s") &&
			strings.Contains(r.Message, "pid "+strconv.Itoa(escaped)+" (sleep 300) left its process group") {
			found = true
		}
	}
	if !found {
		t.Errorf("no failed dev-server gate naming the escaped pid %d: %+v", escaped, results)
	}
}

package claude

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/testutil"
)

func TestArgs(t *testing.T) {
	a := New(agent.Config{Model: "opus", MaxTurns: 7, Args: []string{"--x"}}, nil)
	got := strings.Join(a.Args(agent.Request{System: "SYS"}), " ")
	want := "claude -p --output-format stream-json --verbose --append-system-prompt SYS --permission-mode acceptEdits --allowedTools " +
		strings.Join(DefaultAllowedTools, ",") + " --model opus --max-turns 7 --x"
	if got != want {
		t.Errorf("args =\n%s\nwant\n%s", got, want)
	}
	a = New(agent.Config{PermissionMode: "plan", AllowedTools: []string{}}, nil)
	if got := strings.Join(a.Args(agent.Request{}), " "); got != "claude -p --output-format stream-json --verbose --permission-mode plan" {
		t.Errorf("args = %s", got)
	}
}

func TestMissingBinary(t *testing.T) {
	clitest.MissingBinary(t, newAgent, Available, InstallHint)
}

// A claude that starts a child and then hangs is killed with its whole
// process group once it has been silent for the idle timeout.
func TestIdleTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	bin := testutil.FakeBin(t, "claude", `
sleep 300 &
echo $! > "`+pidFile+`"
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
wait
`)
	var evs []agent.Event
	start := time.Now()
	_, err := New(agent.Config{Binary: bin, KillGrace: 200 * time.Millisecond}, nil).Run(context.Background(),
		agent.Request{Dir: t.TempDir(), IdleTimeout: 500 * time.Millisecond}, func(e agent.Event) { evs = append(evs, e) })
	if !errors.Is(err, agent.ErrIdle) {
		t.Fatalf("err = %v, want ErrIdle", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if len(evs) != 1 || evs[0].Kind != agent.KindInfo {
		t.Errorf("events = %+v", evs)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for proc.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Cancelling the context (the iteration timeout, Ctrl-C) ends the run.
func TestCancelStopsAgent(t *testing.T) {
	bin := testutil.FakeBin(t, "claude", "echo '{}'; exec sleep 300\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := New(agent.Config{Binary: bin, KillGrace: 100 * time.Millisecond}, nil).Run(ctx, agent.Request{Dir: t.TempDir()}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
}

// A claude that exits non-zero without a result reports its stderr.
func TestCrashReportsStderr(t *testing.T) {
	bin := testutil.FakeBin(t, "claude", "echo 'Invalid API key · Please run /login' >&2; exit 1\n")
	_, err := New(agent.Config{Binary: bin}, nil).Run(context.Background(), agent.Request{Dir: t.TempDir()}, nil)
	if err == nil || !strings.Contains(err.Error(), "Invalid API key") {
		t.Fatalf("err = %v", err)
	}
}

// A claude whose stderr reports a limit, with no result line, is limited.
func TestStderrRateLimit(t *testing.T) {
	bin := testutil.FakeBin(t, "claude", "echo 'API Error: 429 rate_limit_error, retry after 30 seconds' >&2; exit 1\n")
	_, err := New(agent.Config{Binary: bin}, nil).Run(context.Background(), agent.Request{Dir: t.TempDir()}, nil)
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) || rl.ResetAt.IsZero() {
		t.Fatalf("err = %v, want a RateLimitError with a reset time", err)
	}
}

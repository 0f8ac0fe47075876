package codex

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
	"github.com/ralph-harness/ralph/internal/sandbox"
	"github.com/ralph-harness/ralph/internal/testutil"
)

func TestArgs(t *testing.T) {
	a := New(agent.Config{Model: "gpt-5.5", Args: []string{"--x"}}, nil)
	got := strings.Join(a.Args(agent.Request{Dir: "/w", System: "be \"good\"\n"}), " ")
	want := `codex exec --json --skip-git-repo-check --sandbox workspace-write -C /w -m gpt-5.5 -c developer_instructions="be \"good\"\n" --x -`
	if got != want {
		t.Errorf("args =\n%s\nwant\n%s", got, want)
	}
}

// Confined by ralph's sandbox, Codex runs without its own, which cannot
// nest in a Landlock domain; a sandbox the configuration names is kept.
func TestArgsSandbox(t *testing.T) {
	confined := &sandbox.Settings{Mode: sandbox.ModeWorkspace}
	tests := []struct {
		cfg  string
		req  *sandbox.Settings
		want string
	}{
		{"", nil, "--sandbox workspace-write"},
		{"", confined, "--sandbox danger-full-access"},
		{"", &sandbox.Settings{Mode: sandbox.ModeOff}, "--sandbox workspace-write"},
		{"read-only", confined, "--sandbox read-only"},
	}
	for _, tt := range tests {
		got := strings.Join(New(agent.Config{Sandbox: tt.cfg}, nil).Args(agent.Request{Dir: "/w", Sandbox: tt.req}), " ")
		if !strings.Contains(got, tt.want) {
			t.Errorf("config %q, request %+v: args = %s, want %s", tt.cfg, tt.req, got, tt.want)
		}
	}
}

func TestTOMLString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":       `"plain"`,
		"a\"b\\c":     `"a\"b\\c"`,
		"l1\nl2\tx\r": `"l1\nl2\tx\r"`,
		"bell\x07":    `"bell\u0007"`,
		"ünï ✓":       `"ünï ✓"`,
	} {
		if got := TOMLString(in); got != want {
			t.Errorf("TOMLString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestMissingBinary(t *testing.T) {
	clitest.MissingBinary(t, newAgent, Available, InstallHint)
}

// A codex that starts a child and hangs is killed with its whole process
// group at the idle timeout.
func TestIdleTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	bin := testutil.FakeBin(t, "codex", `
sh -c 'sleep 300' &
echo $! > "`+pidFile+`"
echo '{"type":"thread.started","thread_id":"t"}'
wait
`)
	_, err := New(agent.Config{Binary: bin, KillGrace: 200 * time.Millisecond}, nil).Run(context.Background(),
		agent.Request{Dir: t.TempDir(), IdleTimeout: 500 * time.Millisecond}, nil)
	if !errors.Is(err, agent.ErrIdle) {
		t.Fatalf("err = %v, want ErrIdle", err)
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

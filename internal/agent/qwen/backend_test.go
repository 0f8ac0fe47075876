package qwen

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

// runFake runs the backend with a fake qwen that prints testdata/NAME and
// saves its arguments and environment to the workspace.
func runFake(t *testing.T, name string) clitest.Run {
	t.Helper()
	return clitest.RunFake(t, newAgent, agent.Config{}, name, `env > "$PWD/env"`)
}

func TestMissingBinary(t *testing.T) {
	clitest.MissingBinary(t, newAgent, Available, InstallHint)
}

// FuzzParse: no input makes the parser panic, and the tool-call count
// matches the tool-call events.
func FuzzParse(f *testing.F) {
	clitest.FuzzParser(f, func() cliagent.Parser { return NewParser() })
}

func TestArgs(t *testing.T) {
	got := New(agent.Config{Model: "qwen3-coder-plus", MaxTurns: 7, Args: []string{"--x"}}, nil).
		Args(agent.Request{System: "SYS", Prompt: "P"})
	want := []string{"qwen", "--output-format", "stream-json", "--approval-mode", "yolo", "--append-system-prompt", "SYS",
		"-m", "qwen3-coder-plus", "--max-session-turns", "7", "--x", "P"}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("args = %q\nwant   %q", got, want)
	}
	got = New(agent.Config{PermissionMode: "auto-edit"}, nil).Args(agent.Request{Prompt: "P"})
	if strings.Join(got, " ") != "qwen --output-format stream-json --approval-mode auto-edit P" {
		t.Errorf("args = %q", got)
	}
}

// The recorded stream of the real Qwen Code, replayed by a fake qwen:
// the system prompt travels as --append-system-prompt, the prompt last,
// and the nested-agent variables do not reach it.
func TestRunSuccess(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	r := runFake(t, "real-success.jsonl")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Result.Final != "All done. <promise>COMPLETE</promise>" || r.Result.ToolCalls != 2 || r.Result.Usage.InputTokens != 300 {
		t.Errorf("result = %+v", r.Result)
	}
	args := clitest.ReadFile(t, r.Dir, "args")
	if !strings.Contains(args, "--append-system-prompt\nRALPH-SYSTEM\n") || !strings.HasSuffix(args, "\nRALPH-TASK\n") {
		t.Errorf("args = %q", args)
	}
	env := clitest.ReadFile(t, r.Dir, "env")
	if !strings.Contains(env, "QWEN_CODE_SUPPRESS_YOLO_WARNING=1") || strings.Contains(env, "CLAUDECODE=") {
		t.Errorf("env = %s\nwant QWEN_CODE_SUPPRESS_YOLO_WARNING=1 and no CLAUDECODE", env)
	}
}

func TestRunRateLimited(t *testing.T) {
	clitest.WantRateLimit(t, runFake(t, "real-ratelimit.jsonl").Err, "429 You exceeded your current quota")
}

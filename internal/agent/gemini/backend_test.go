package gemini

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

// runFake runs the backend with a fake gemini that prints testdata/NAME and
// saves its arguments and the system prompt file to the workspace.
func runFake(t *testing.T, name string) clitest.Run {
	t.Helper()
	return clitest.RunFake(t, newAgent, agent.Config{}, name,
		`[ -n "$GEMINI_SYSTEM_MD" ] && cat "$GEMINI_SYSTEM_MD" > "$PWD/system"`)
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
	got := strings.Join(New(agent.Config{Model: "gemini-2.5-pro", Args: []string{"--x"}}, nil).Args(agent.Request{Prompt: "P"}), " ")
	if want := "gemini --output-format stream-json --approval-mode yolo --skip-trust -m gemini-2.5-pro --x --prompt P"; got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
}

func TestRunSuccess(t *testing.T) {
	r := runFake(t, "success.jsonl")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	evs, res := r.Events, r.Result
	clitest.WantKinds(t, evs, "info text text tool_call:write_file tool_result:write_file tool_call:run_shell_command tool_result:run_shell_command text text usage")
	if !evs[6].IsError || evs[4].IsError || !strings.Contains(string(evs[3].Input), `"file_path":"hello.txt"`) {
		t.Errorf("tool events = %+v", evs[3:7])
	}
	if res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 2 ||
		res.Usage != (agent.Usage{InputTokens: 300, OutputTokens: 60, CacheReadTokens: 10}) {
		t.Errorf("result = %+v", res)
	}
	if b := clitest.ReadFile(t, r.Dir, "system"); b != "RALPH-SYSTEM" {
		t.Errorf("GEMINI_SYSTEM_MD held %q", b)
	}
	if b := clitest.ReadFile(t, r.Dir, "args"); !strings.HasSuffix(b, "--prompt\nRALPH-TASK\n") {
		t.Errorf("args = %q", b)
	}
}

func TestRunRateLimited(t *testing.T) {
	clitest.WantRateLimit(t, runFake(t, "ratelimit.jsonl").Err, "429")
}

package amp

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/claude"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

func TestMissingBinary(t *testing.T) {
	clitest.MissingBinary(t, newAgent, Available, InstallHint)
}

// FuzzParse: no input makes the parser panic, and the tool-call count
// matches the tool-call events.
func FuzzParse(f *testing.F) {
	clitest.FuzzParser(f, func() cliagent.Parser { return claude.NewParser() })
}

func TestArgs(t *testing.T) {
	got := New(agent.Config{}, nil).Args(agent.Request{System: "S", Prompt: "P"})
	want := []string{"amp", "--execute", "<system-instructions>\nS\n</system-instructions>\n\nP", "--stream-json", "--dangerously-allow-all"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("args = %q", got)
	}
}

func TestRunSuccess(t *testing.T) {
	r := clitest.RunFake(t, newAgent, agent.Config{}, "success.jsonl", "")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	want := "info text tool_call:create_file tool_result:create_file text usage"
	if got := clitest.Kinds(r.Events); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if res := r.Result; res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 1 || res.Usage.InputTokens != 250 {
		t.Errorf("result = %+v", res)
	}
}

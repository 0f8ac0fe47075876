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
	clitest.WantKinds(t, r.Events, "info text tool_call:create_file tool_result:create_file text usage")
	if res := r.Result; res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 1 || res.Usage.InputTokens != 250 {
		t.Errorf("result = %+v", res)
	}
}

// Amp's stream is untested against the real program, so the parser must
// take whatever comes: events and content blocks it does not know are
// skipped, and the ones it knows still count.
func TestParseToleratesUnknownEvents(t *testing.T) {
	evs, out := clitest.Parse(claude.NewParser(), `{"type":"thread_created","thread":{"id":"T-1"}}
not json at all
{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Working."},{"type":"tool_use","id":"t1","name":"edit_file","input":{"path":"a.go"}},{"type":"mystery"}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}
{"type":"progress","percent":50}
{"type":"result","subtype":"success","is_error":false,"result":"Done.","usage":{"input_tokens":10,"output_tokens":2}}`)
	if got := clitest.Kinds(evs); got != "text tool_call:edit_file tool_result:edit_file usage" {
		t.Errorf("events = %s", got)
	}
	if out.Failed || out.Result.Final != "Done." || out.Result.ToolCalls != 1 {
		t.Errorf("outcome = %+v", out)
	}
}

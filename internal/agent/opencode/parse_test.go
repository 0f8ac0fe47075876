package opencode

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

// The stream the real opencode 1.18.33 printed in
// TestRealOpencodeWritesFile (recorded with RALPH_RECORD=1).
func TestParseRecordedSuccess(t *testing.T) {
	evs, out := clitest.ParseFile(t, NewParser(), "real-success.jsonl")
	clitest.WantKinds(t, evs, "text tool_call:write tool_result:write usage tool_call:bash tool_result:bash usage text usage")
	if !strings.Contains(string(evs[1].Input), "hello.txt") || evs[2].IsError || !strings.Contains(evs[5].Text, "hello world") {
		t.Errorf("tool events = %+v", evs[1:6])
	}
	if out.Failed || out.Result.Final != "All done. <promise>COMPLETE</promise>" || out.Result.ToolCalls != 2 ||
		out.Result.Usage.InputTokens != 300 || out.Result.Usage.OutputTokens != 60 {
		t.Errorf("outcome = %+v", out)
	}
}

// The real stream of a write outside the workspace that ralph's permission
// rule denied: a tool_use in state error, then the model's next step.
func TestParseRecordedDenied(t *testing.T) {
	evs, out := clitest.ParseFile(t, NewParser(), "real-denied.jsonl")
	var denied bool
	for _, e := range evs {
		denied = denied || e.Tool == "write" && e.IsError && strings.Contains(e.Text, "prevents you from using this specific tool call")
	}
	if !denied || out.Failed || out.Result.Final != "The write was refused, so I stopped." {
		t.Errorf("events = %s, outcome = %+v", clitest.Kinds(evs), out)
	}
}

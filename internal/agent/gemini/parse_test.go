package gemini

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

// The stream the real Gemini CLI 0.61.0 printed in TestRealGeminiWritesFile
// (recorded with RALPH_RECORD=1): a successful write_file result has no
// output field, and the stats report tokens but no cost.
func TestParseRecordedSuccess(t *testing.T) {
	evs, out := clitest.ParseFile(t, NewParser(), "real-success.jsonl")
	clitest.WantKinds(t, evs, "info text text tool_call:write_file tool_result:write_file tool_call:run_shell_command tool_result:run_shell_command text text usage")
	if evs[4].IsError || evs[4].ToolID != evs[3].ToolID || evs[6].Text != "hello world" {
		t.Errorf("tool results = %+v, %+v", evs[4], evs[6])
	}
	if out.Failed || out.Result.Final != "All done. <promise>COMPLETE</promise>" || out.Result.ToolCalls != 2 ||
		out.Result.Usage != (agent.Usage{InputTokens: 300, OutputTokens: 60}) {
		t.Errorf("outcome = %+v", out)
	}
}

// The real stream of a daily quota answer (HTTP 429 RESOURCE_EXHAUSTED
// with a per-day QuotaFailure): a result with status error whose message
// is recognised as a usage limit.
func TestParseRecordedQuota(t *testing.T) {
	_, out := clitest.ParseFile(t, NewParser(), "real-ratelimit.jsonl")
	if !out.Failed || !out.RateLimited || !strings.Contains(out.Message, "exhausted your daily quota") {
		t.Errorf("outcome = %+v, want a rate-limited failure", out)
	}
}

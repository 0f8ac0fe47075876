package qwen

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

// The stream the real Qwen Code 0.24.4 printed in TestRealQwenWritesFile
// (recorded with RALPH_RECORD=1).
func TestParseRecordedSuccess(t *testing.T) {
	evs, out := clitest.ParseFile(t, NewParser(), "real-success.jsonl")
	clitest.WantKinds(t, evs, "info text tool_call:write_file tool_result:write_file tool_call:run_shell_command tool_result:run_shell_command text usage")
	if !strings.HasPrefix(evs[0].Text, "qwen session ") || !strings.Contains(string(evs[2].Input), "hello.txt") ||
		evs[3].IsError || evs[5].Text != "hello world" {
		t.Errorf("events = %+v", evs)
	}
	if out.Failed || out.Result.Final != "All done. <promise>COMPLETE</promise>" || out.Result.ToolCalls != 2 ||
		out.Result.Usage.InputTokens != 300 || out.Result.Usage.OutputTokens != 60 || out.Result.Usage.CostUSD != 0 {
		t.Errorf("outcome = %+v", out)
	}
}

// The real stream of a run whose provider answered 429: the result's
// error{message} is the failure, recognised as a limit.
func TestParseRecordedRateLimit(t *testing.T) {
	_, out := clitest.ParseFile(t, NewParser(), "real-ratelimit.jsonl")
	if !out.Failed || !out.RateLimited || !strings.Contains(out.Message, "[API Error: 429 You exceeded your current quota") {
		t.Errorf("outcome = %+v, want a rate-limited failure with Qwen Code's message", out)
	}
}

// Qwen Code waiting out a rate limit says so with system/retry.
func TestParseRetry(t *testing.T) {
	evs, _ := clitest.Parse(NewParser(), `{"type":"system","subtype":"retry","data":{"reason":"retry","attempt":1,"maxRetries":10,"delayMs":60000}}`)
	if len(evs) != 1 || evs[0].Text != "qwen retrying the API in 1m0s (attempt 1 of 10)" {
		t.Errorf("events = %+v", evs)
	}
}

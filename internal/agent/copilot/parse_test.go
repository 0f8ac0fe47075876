package copilot

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

// The stream the real Copilot CLI 1.0.102 printed in
// TestRealCopilotWritesFile (recorded with RALPH_RECORD=1).
func TestParseRecordedSuccess(t *testing.T) {
	evs, out := clitest.ParseFile(t, NewParser(), "real-success.jsonl")
	clitest.WantKinds(t, evs, "info text tool_call:create tool_result:create tool_call:bash tool_result:bash text")
	if !strings.Contains(string(evs[2].Input), "hello.txt") || evs[3].IsError || !strings.Contains(evs[5].Text, "hello world") {
		t.Errorf("events = %+v", evs)
	}
	if out.Failed || out.Result.Final != "All done. <promise>COMPLETE</promise>" || out.Result.ToolCalls != 2 {
		t.Errorf("outcome = %+v", out)
	}
}

// The real stream of a run whose provider kept answering 429: retries,
// then a rate_limit session error and exit code 1.
func TestParseRecordedRateLimit(t *testing.T) {
	evs, out := clitest.ParseFile(t, NewParser(), "real-ratelimit.jsonl")
	if !out.Failed || !out.RateLimited || !strings.Contains(out.Message, "429 You exceeded your current quota") {
		t.Errorf("outcome = %+v, want a rate-limited failure", out)
	}
	if !strings.Contains(clitest.Kinds(evs), "info info") {
		t.Errorf("no retry info events: %s", clitest.Kinds(evs))
	}
}

func TestParseUsage(t *testing.T) {
	if _, ok := ParseUsage([]byte(`{"modelMetrics":{}}`)); ok {
		t.Error("an empty usage file gave usage")
	}
	u, ok := ParseUsage([]byte(`{"modelMetrics":{"a":{"usage":{"inputTokens":1,"outputTokens":2}},"b":{"usage":{"inputTokens":10,"outputTokens":20,"cacheWriteTokens":3}}}}`))
	if !ok || u.InputTokens != 11 || u.OutputTokens != 22 || u.CacheWriteTokens != 3 {
		t.Errorf("usage = %+v, %v", u, ok)
	}
}

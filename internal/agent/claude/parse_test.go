package claude

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
)

// parse feeds every line of text to a new parser.
func parse(text string) ([]agent.Event, cliagent.Outcome) { return clitest.Parse(NewParser(), text) }

func parseFile(t *testing.T, name string) ([]agent.Event, cliagent.Outcome) {
	t.Helper()
	return clitest.ParseFile(t, NewParser(), name)
}

// success.jsonl is Claude Code 2.1.329's real stream of a run that wrote a
// file with Write and ran cat with Bash (recorded by TestRealClaudeWritesFile).
func TestParseRecordedSuccess(t *testing.T) {
	evs, out := parseFile(t, "success.jsonl")
	clitest.WantKinds(t, evs, "info text tool_call:Write tool_result:Write tool_call:Bash tool_result:Bash text usage")
	if out.Failed {
		t.Errorf("failed: %s", out.Message)
	}
	r := out.Result
	if r.Final != "All done. <promise>COMPLETE</promise>" || r.ToolCalls != 2 {
		t.Errorf("result = %+v", r)
	}
	if r.Usage.InputTokens != 300 || r.Usage.OutputTokens != 60 || r.Usage.CostUSD <= 0 {
		t.Errorf("usage = %+v", r.Usage)
	}
	if !strings.Contains(string(evs[2].Input), `"file_path"`) || evs[2].ToolID == "" || evs[3].ToolID != evs[2].ToolID {
		t.Errorf("Write call/result = %+v / %+v", evs[2], evs[3])
	}
}

// ratelimit.jsonl: the provider answered 429 and CLAUDE_CODE_MAX_RETRIES=0.
func TestParseRecordedRateLimit(t *testing.T) {
	_, out := parseFile(t, "ratelimit.jsonl")
	if !out.Failed || !out.RateLimited || !strings.Contains(out.Message, "429") {
		t.Errorf("outcome = %+v", out)
	}
}

// apierror.jsonl: the provider answered 400.
func TestParseRecordedAPIError(t *testing.T) {
	_, out := parseFile(t, "apierror.jsonl")
	if !out.Failed || out.RateLimited || !strings.Contains(out.Message, "prompt is malformed") {
		t.Errorf("outcome = %+v", out)
	}
}

func TestParseConstructed(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		kinds   string
		final   string
		calls   int
		usage   agent.Usage
		failed  bool
		limited bool
	}{
		{
			name: "one message over several lines counts its usage once",
			stream: `not json at all
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":10,"output_tokens":1}}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"output_tokens":5}}}
{"type":"surprise","x":1}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x.go"}],"is_error":true}]}}
{"type":"assistant","message":{"id":"m2","content":"plain string content","usage":{"input_tokens":20,"output_tokens":2}}}`,
			kinds: "text tool_call:Bash tool_result:Bash text",
			final: "plain string content",
			calls: 1,
			usage: agent.Usage{InputTokens: 30, OutputTokens: 7},
		},
		{
			name: "max turns is not a failure",
			stream: `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"working"}]}}
{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3,"total_cost_usd":0.5,"usage":{"input_tokens":1,"output_tokens":2}}`,
			kinds: "text usage error",
			final: "working",
			usage: agent.Usage{InputTokens: 1, OutputTokens: 2, CostUSD: 0.5},
		},
		{
			name:    "subscription usage limit in a non-error result",
			stream:  `{"type":"result","subtype":"success","is_error":false,"result":"Claude AI usage limit reached|1735689600"}`,
			kinds:   "usage",
			failed:  true,
			limited: true,
		},
		{
			name:    "overloaded",
			stream:  `{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: Repeated 529 Overloaded errors"}`,
			kinds:   "usage error",
			failed:  true,
			limited: true,
		},
		{
			name:   "errors list",
			stream: `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["boom",{"message":"bang"}]}`,
			kinds:  "usage error",
			failed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, out := parse(tt.stream)
			if got := clitest.Kinds(evs); got != tt.kinds {
				t.Errorf("events = %s, want %s", got, tt.kinds)
			}
			r := out.Result
			if r.Final != tt.final || r.ToolCalls != tt.calls || r.Usage != tt.usage {
				t.Errorf("result = %+v", r)
			}
			if out.Failed != tt.failed || out.RateLimited != tt.limited {
				t.Errorf("outcome = %+v", out)
			}
		})
	}
}

// FuzzParse: no input makes the parser panic, and the tool-call count
// always matches the tool-call events.
func FuzzParse(f *testing.F) {
	clitest.FuzzParser(f, func() cliagent.Parser { return NewParser() })
}

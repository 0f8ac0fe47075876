package codex

import (
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

// success.jsonl is Codex 0.169's real stream of a run that added a file
// with apply_patch and ran cat (recorded by TestRealCodexWritesFile).
func TestParseRecordedSuccess(t *testing.T) {
	evs, out := parseFile(t, "success.jsonl")
	clitest.WantKinds(t, evs, "info text tool_call:file_change tool_result:file_change tool_call:command_execution tool_result:command_execution text usage")
	if out.Failed {
		t.Errorf("failed: %s", out.Message)
	}
	r := out.Result
	if r.Final != "All done. <promise>COMPLETE</promise>" || r.ToolCalls != 2 || r.Usage.InputTokens != 300 || r.Usage.OutputTokens != 60 {
		t.Errorf("result = %+v", r)
	}
}

func TestParseRecordedFailures(t *testing.T) {
	for name, limited := range map[string]bool{"failed.jsonl": false, "ratelimit.jsonl": true, "usagelimit.jsonl": true} {
		_, out := parseFile(t, name)
		if !out.Failed || out.RateLimited != limited || out.Message == "" {
			t.Errorf("%s: outcome = %+v", name, out)
		}
	}
}

func TestParseConstructed(t *testing.T) {
	stream := `garbage line
{"type":"thread.started","thread_id":"th1"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata not found"}}
{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"thinking"}}
{"type":"item.started","item":{"id":"item_2","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}
{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}
{"type":"item.started","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"error":{"message":"down"},"status":"failed"}}
{"type":"item.completed","item":{"id":"item_5","type":"web_search","query":"go fuzz"}}
{"type":"item.completed","item":{"id":"item_6","type":"file_change","changes":[{"path":"a.go","kind":"update"}],"status":"completed"}}
{"type":"something.new"}
{"type":"error","message":"Reconnecting... 1/5"}
{"type":"item.completed","item":{"id":"item_7","type":"agent_message","text":"first"}}
{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3}}
{"type":"item.completed","item":{"id":"item_8","type":"agent_message","text":"last"}}
{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":1}}`
	evs, out := parse(stream)
	want := "info error info info tool_call:command_execution tool_result:command_execution " +
		"tool_call:mcp:docs/search tool_result:mcp:docs/search tool_call:web_search tool_result:web_search " +
		"tool_call:file_change tool_result:file_change error text usage text usage"
	clitest.WantKinds(t, evs, want)
	if !evs[5].IsError || !evs[7].IsError || evs[11].IsError {
		t.Errorf("IsError wrong: %+v %+v %+v", evs[5], evs[7], evs[11])
	}
	if out.Failed {
		t.Errorf("a reconnect before a completed turn failed the run: %+v", out)
	}
	r := out.Result
	if r.Final != "last" || r.ToolCalls != 4 || r.Usage != (agent.Usage{InputTokens: 15, OutputTokens: 4, CacheReadTokens: 4}) {
		t.Errorf("result = %+v", r)
	}
}

func FuzzParse(f *testing.F) {
	clitest.FuzzParser(f, func() cliagent.Parser { return NewParser() })
}

package codex

import (
	"encoding/json"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Parser turns the JSONL of codex exec --json into events.
//
//   - thread.started: an info event with the thread id.
//   - item.started / item.completed, by item type: agent_message → text;
//     reasoning and todo_list → info; command_execution, file_change,
//     mcp_tool_call and web_search → a tool call when the item starts (or
//     completes without having started) and a tool result when it
//     completes; error → an error event (codex reports warnings this way;
//     they do not fail the run).
//   - turn.completed: a usage event; usage is summed over turns.
//   - turn.failed and error: an error event; the run failed.
//
// The final message is the last agent_message. Unknown event types and
// lines that are not JSON are skipped.
type Parser struct {
	tally   cliagent.Tally
	started map[string]bool
	failed  bool
	message string
}

var _ cliagent.Parser = (*Parser)(nil)

// NewParser returns a parser for one run.
func NewParser() *Parser { return &Parser{started: map[string]bool{}} }

type event struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     json.RawMessage `json:"item"`
	Usage    *wireUsage      `json:"usage"`
	Error    json.RawMessage `json:"error"`
	Message  string          `json:"message"`
}

type wireUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
}

type item struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Message          string          `json:"message"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Changes          json.RawMessage `json:"changes"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           json.RawMessage `json:"result"`
	Error            json.RawMessage `json:"error"`
	Query            string          `json:"query"`
	Items            []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

// Line parses one line of codex's JSONL.
func (p *Parser) Line(line string, emit func(agent.Event)) {
	var e event
	if !cliagent.DecodeLine(line, &e) {
		return
	}
	out := func(ev agent.Event) { p.tally.Emit(emit, ev) }
	switch e.Type {
	case "thread.started":
		out(agent.Event{Kind: agent.KindInfo, Text: "codex thread " + e.ThreadID})
	case "item.started", "item.updated", "item.completed":
		var it item
		if json.Unmarshal(e.Item, &it) != nil {
			return
		}
		p.item(it, e.Type == "item.completed", e.Type == "item.started", out)
	case "turn.completed":
		p.failed, p.message = false, "" // errors before it were retried away
		if e.Usage != nil {
			u := agent.Usage{
				InputTokens:      e.Usage.InputTokens,
				OutputTokens:     e.Usage.OutputTokens,
				CacheReadTokens:  e.Usage.CachedInputTokens,
				CacheWriteTokens: e.Usage.CacheWriteInputTokens,
			}
			p.tally.Usage = p.tally.Usage.Add(u)
			out(agent.Event{Kind: agent.KindUsage, Usage: &u})
		}
	case "turn.failed", "error":
		msg := cliagent.Message(e.Error)
		if msg == "" {
			msg = e.Message
		}
		if msg == "" {
			msg = e.Type
		}
		// codex reports its own reconnect attempts as error events; only
		// their last word counts, and a later turn.failed overrides them.
		p.failed, p.message = true, msg
		out(agent.Event{Kind: agent.KindError, Text: msg})
	}
}

func (p *Parser) item(it item, completed, started bool, out func(agent.Event)) {
	switch it.Type {
	case "agent_message":
		if completed && it.Text != "" {
			out(agent.Event{Kind: agent.KindText, Text: it.Text})
		}
	case "reasoning":
		if completed && it.Text != "" {
			out(agent.Event{Kind: agent.KindInfo, Text: "reasoning: " + it.Text})
		}
	case "todo_list":
		if completed || started {
			var lines []string
			for _, t := range it.Items {
				box := "[ ]"
				if t.Completed {
					box = "[x]"
				}
				lines = append(lines, box+" "+t.Text)
			}
			out(agent.Event{Kind: agent.KindInfo, Text: "todo:\n" + strings.Join(lines, "\n")})
		}
	case "error":
		if completed {
			out(agent.Event{Kind: agent.KindError, Text: it.Message})
		}
	case "command_execution", "file_change", "mcp_tool_call", "web_search":
		if !started && !completed {
			return
		}
		if !p.started[it.ID] {
			p.started[it.ID] = true
			name, input := toolCall(it)
			out(agent.Event{Kind: agent.KindToolCall, Tool: name, ToolID: it.ID, Input: input})
		}
		if completed {
			name, _ := toolCall(it)
			text, isErr := toolResult(it)
			out(agent.Event{Kind: agent.KindToolResult, Tool: name, ToolID: it.ID, Text: text, IsError: isErr})
		}
	}
}

// toolCall names an item's tool and renders its input as JSON.
func toolCall(it item) (string, json.RawMessage) {
	var in any
	name := it.Type
	switch it.Type {
	case "command_execution":
		in = map[string]any{"command": it.Command}
	case "file_change":
		var changes any
		if json.Unmarshal(it.Changes, &changes) != nil {
			changes = []any{}
		}
		in = map[string]any{"changes": changes}
	case "mcp_tool_call":
		name = "mcp:" + it.Server + "/" + it.Tool
		var args any
		if json.Unmarshal(it.Arguments, &args) != nil {
			args = map[string]any{}
		}
		in = args
	case "web_search":
		in = map[string]any{"query": it.Query}
	}
	b, err := json.Marshal(in)
	if err != nil {
		b = []byte("{}")
	}
	return name, b
}

func toolResult(it item) (string, bool) {
	failed := it.Status == "failed" || it.Status == "declined"
	switch it.Type {
	case "command_execution":
		if it.ExitCode != nil && *it.ExitCode != 0 {
			failed = true
		}
		return it.AggregatedOutput, failed
	case "file_change":
		var changes []struct{ Path, Kind string }
		_ = json.Unmarshal(it.Changes, &changes)
		var lines []string
		for _, c := range changes {
			lines = append(lines, c.Kind+" "+c.Path)
		}
		return strings.Join(lines, "\n"), failed
	case "mcp_tool_call":
		if msg := cliagent.Message(it.Error); msg != "" {
			return msg, true
		}
		return string(it.Result), failed
	}
	return it.Status, failed
}

// Outcome returns the run's result and failure.
func (p *Parser) Outcome() cliagent.Outcome {
	return cliagent.Outcome{Result: p.tally.Result(""), Failed: p.failed, Message: p.message,
		RateLimited: p.failed && agent.IsRateLimit(p.message)}
}

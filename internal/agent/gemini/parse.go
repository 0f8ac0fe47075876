package gemini

import (
	"encoding/json"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Parser turns Gemini CLI's --output-format stream-json lines into events.
//
//   - init {session_id, model}: an info event.
//   - message {role, content, delta}: assistant content → a text event per
//     line; the final message is the assistant text since the last tool
//     call, deltas joined.
//   - tool_use {tool_name, tool_id, parameters}: a tool call.
//   - tool_result {tool_id, status, output, error}: a tool result.
//   - error {severity, message}: an error event (warnings do not fail).
//   - result {status, error, stats}: usage from stats; status "error"
//     fails the run.
//
// Unknown event types and lines that are not JSON are skipped.
type Parser struct {
	tally   cliagent.Tally
	names   map[string]string
	final   strings.Builder
	failed  bool
	message string
}

var _ cliagent.Parser = (*Parser)(nil)

// NewParser returns a parser for one run.
func NewParser() *Parser { return &Parser{names: map[string]string{}} }

type event struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     json.RawMessage `json:"output"`
	Error      json.RawMessage `json:"error"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Stats      *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
		Input        int64 `json:"input"`
	} `json:"stats"`
}

// Line parses one line of stream-json.
func (p *Parser) Line(line string, emit func(agent.Event)) {
	var e event
	if !cliagent.DecodeLine(line, &e) {
		return
	}
	out := func(ev agent.Event) { p.tally.Emit(emit, ev) }
	switch e.Type {
	case "init":
		out(agent.Event{Kind: agent.KindInfo, Text: "gemini session " + e.SessionID + ", model " + e.Model})
	case "message":
		if e.Role != "assistant" || e.Content == "" {
			return
		}
		if !e.Delta {
			p.final.Reset()
		}
		p.final.WriteString(e.Content)
		out(agent.Event{Kind: agent.KindText, Text: e.Content})
	case "tool_use":
		p.names[e.ToolID] = e.ToolName
		p.final.Reset()
		in := e.Parameters
		if len(in) == 0 || !json.Valid(in) {
			in = json.RawMessage("{}")
		}
		out(agent.Event{Kind: agent.KindToolCall, Tool: e.ToolName, ToolID: e.ToolID, Input: in})
	case "tool_result":
		text, isErr := cliagent.Text(e.Output), e.Status == "error"
		if msg := errorText(e.Error); msg != "" {
			text, isErr = msg, true
		}
		out(agent.Event{Kind: agent.KindToolResult, Tool: p.names[e.ToolID], ToolID: e.ToolID, Text: text, IsError: isErr})
	case "error":
		out(agent.Event{Kind: agent.KindError, Text: e.Message})
	case "result":
		if e.Stats != nil {
			in := e.Stats.InputTokens
			if in == 0 {
				in = e.Stats.Input
			}
			u := agent.Usage{InputTokens: in, OutputTokens: e.Stats.OutputTokens, CacheReadTokens: e.Stats.Cached}
			p.tally.Usage = u
			out(agent.Event{Kind: agent.KindUsage, Usage: &u})
		}
		if e.Status == "error" {
			p.failed = true
			p.message = errorText(e.Error)
			if p.message == "" {
				p.message = "gemini reported an error"
			}
			out(agent.Event{Kind: agent.KindError, Text: p.message})
		}
	}
}

// Outcome returns the run's result and failure.
func (p *Parser) Outcome() cliagent.Outcome {
	return cliagent.Outcome{Result: p.tally.Result(p.final.String()), Failed: p.failed, Message: p.message,
		RateLimited: p.failed && agent.IsRateLimit(p.message)}
}

// errorText renders an error value: a string, or an object's message
// ("" for an object without one).
func errorText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			Message string `json:"message"`
		}
		json.Unmarshal(raw, &obj)
		return obj.Message
	}
	return cliagent.Text(raw)
}

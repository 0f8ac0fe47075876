package copilot

import (
	"encoding/json"
	"fmt"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Parser turns the JSONL of copilot --output-format json into events.
// Every line is {type, data, id, timestamp, …}:
//
//   - session.tools_updated {model}: an info event naming the model.
//   - assistant.message {content, toolRequests[{toolCallId, name,
//     arguments}]}: a text event for non-empty content, a tool call per
//     request; the final message is the last non-empty content.
//   - tool.execution_complete {toolCallId, success, result{content},
//     error{message}}: a tool result, an error when success is false.
//   - assistant.turn_retry {reason}: an info event (Copilot CLI retries a
//     rate-limited request itself, honouring retry-after).
//   - session.error {errorType, message, statusCode}: an error event; the
//     run failed, and errorType rate_limit or status 429 makes it a limit.
//   - result {exitCode}: a non-zero exit code fails the run.
//
// Streaming deltas (assistant.message_delta, tool_call_delta), model call
// bookkeeping and other event types are skipped, as are lines that are
// not JSON.
type Parser struct {
	tally   cliagent.Tally
	names   map[string]string
	final   string
	failed  bool
	limited bool
	message string
}

var _ cliagent.Parser = (*Parser)(nil)

// NewParser returns a parser for one run.
func NewParser() *Parser { return &Parser{names: map[string]string{}} }

type line struct {
	Type string `json:"type"`
	Data struct {
		Model        string `json:"model"`
		Content      string `json:"content"`
		ToolRequests []struct {
			ToolCallID string          `json:"toolCallId"`
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
		} `json:"toolRequests"`
		ToolCallID string `json:"toolCallId"`
		Success    *bool  `json:"success"`
		Result     *struct {
			Content string `json:"content"`
		} `json:"result"`
		Error      json.RawMessage `json:"error"`
		Reason     string          `json:"reason"`
		ErrorType  string          `json:"errorType"`
		Message    string          `json:"message"`
		StatusCode int             `json:"statusCode"`
	} `json:"data"`
	ExitCode *int `json:"exitCode"`
}

// Line parses one line of Copilot CLI's JSON output.
func (p *Parser) Line(raw string, emit func(agent.Event)) {
	var l line
	if !cliagent.DecodeLine(raw, &l) {
		return
	}
	out := func(e agent.Event) { p.tally.Emit(emit, e) }
	d := l.Data
	switch l.Type {
	case "session.tools_updated":
		if d.Model != "" {
			out(agent.Event{Kind: agent.KindInfo, Text: "copilot model " + d.Model})
		}
	case "assistant.message":
		if d.Content != "" {
			p.final = d.Content
			out(agent.Event{Kind: agent.KindText, Text: d.Content})
		}
		for _, r := range d.ToolRequests {
			p.names[r.ToolCallID] = r.Name
			in := r.Arguments
			if len(in) == 0 || !json.Valid(in) || in[0] != '{' {
				in = json.RawMessage("{}")
			}
			out(agent.Event{Kind: agent.KindToolCall, Tool: r.Name, ToolID: r.ToolCallID, Input: in})
		}
	case "tool.execution_complete":
		var text string
		if d.Result != nil {
			text = d.Result.Content
		}
		isErr := d.Success != nil && !*d.Success
		if msg := cliagent.Message(d.Error); msg != "" {
			text, isErr = msg, true
		}
		out(agent.Event{Kind: agent.KindToolResult, Tool: p.names[d.ToolCallID], ToolID: d.ToolCallID, Text: text, IsError: isErr})
	case "assistant.turn_retry":
		out(agent.Event{Kind: agent.KindInfo, Text: "copilot retrying the model (" + d.Reason + ")"})
	case "session.error":
		msg := d.Message
		if msg == "" {
			msg = "copilot reported an error (" + d.ErrorType + ")"
		}
		p.failed, p.message = true, msg
		p.limited = p.limited || d.ErrorType == "rate_limit" || d.StatusCode == 429 || agent.IsRateLimit(msg)
		out(agent.Event{Kind: agent.KindError, Text: msg})
	case "result":
		if l.ExitCode != nil && *l.ExitCode != 0 && !p.failed {
			p.failed, p.message = true, fmt.Sprintf("copilot ended with exit code %d", *l.ExitCode)
		}
	}
}

// Outcome returns the run's result and failure.
func (p *Parser) Outcome() cliagent.Outcome {
	return cliagent.Outcome{Result: p.tally.Result(p.final), Failed: p.failed, Message: p.message, RateLimited: p.limited}
}

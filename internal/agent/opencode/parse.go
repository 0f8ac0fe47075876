package opencode

import (
	"encoding/json"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Parser turns the JSON lines of opencode run --format json into events.
// Every line has a type, a timestamp, a sessionID and a part:
//
//   - step_start: nothing (a model step begins).
//   - text {part.text}: a text event; the final message is the last one.
//   - tool_use {part.tool, part.callID, part.state{status, input, output,
//     error}}: a tool call and, once the state is completed or error, its
//     result.
//   - step_finish {part.reason, part.cost, part.tokens{input, output,
//     reasoning, cache{read, write}}}: a usage event; usage and cost are
//     summed over steps.
//   - error {error{name, data{message}}}: an error event; the run failed.
//
// Unknown event types and lines that are not JSON are skipped.
type Parser struct {
	tally   cliagent.Tally
	called  map[string]bool
	failed  bool
	message string
}

var _ cliagent.Parser = (*Parser)(nil)

// NewParser returns a parser for one run.
func NewParser() *Parser { return &Parser{called: map[string]bool{}} }

type event struct {
	Type  string          `json:"type"`
	Part  part            `json:"part"`
	Error json.RawMessage `json:"error"`
}

type part struct {
	Text   string  `json:"text"`
	Tool   string  `json:"tool"`
	CallID string  `json:"callID"`
	Reason string  `json:"reason"`
	Cost   float64 `json:"cost"`
	State  struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
		Error  json.RawMessage `json:"error"`
	} `json:"state"`
	Tokens struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
}

// Line parses one line of opencode's JSON output.
func (p *Parser) Line(line string, emit func(agent.Event)) {
	var e event
	if !cliagent.DecodeLine(line, &e) {
		return
	}
	out := func(ev agent.Event) { p.tally.Emit(emit, ev) }
	switch e.Type {
	case "text":
		if e.Part.Text != "" {
			out(agent.Event{Kind: agent.KindText, Text: e.Part.Text})
		}
	case "tool_use":
		s := e.Part.State
		if !p.called[e.Part.CallID] || e.Part.CallID == "" {
			p.called[e.Part.CallID] = true
			in := s.Input
			if len(in) == 0 || !json.Valid(in) {
				in = json.RawMessage("{}")
			}
			out(agent.Event{Kind: agent.KindToolCall, Tool: e.Part.Tool, ToolID: e.Part.CallID, Input: in})
		}
		switch s.Status {
		case "completed":
			out(agent.Event{Kind: agent.KindToolResult, Tool: e.Part.Tool, ToolID: e.Part.CallID, Text: cliagent.Text(s.Output)})
		case "error":
			out(agent.Event{Kind: agent.KindToolResult, Tool: e.Part.Tool, ToolID: e.Part.CallID, Text: cliagent.Text(s.Error), IsError: true})
		}
	case "step_finish":
		t := e.Part.Tokens
		u := agent.Usage{InputTokens: t.Input, OutputTokens: t.Output + t.Reasoning,
			CacheReadTokens: t.Cache.Read, CacheWriteTokens: t.Cache.Write, CostUSD: e.Part.Cost}
		p.tally.Usage = p.tally.Usage.Add(u)
		out(agent.Event{Kind: agent.KindUsage, Usage: &u})
	case "error":
		msg := errorText(e.Error)
		p.failed, p.message = true, msg
		out(agent.Event{Kind: agent.KindError, Text: msg})
	}
}

// Outcome returns the run's result and failure.
func (p *Parser) Outcome() cliagent.Outcome {
	return cliagent.Outcome{Result: p.tally.Result(""), Failed: p.failed, Message: p.message,
		RateLimited: p.failed && agent.IsRateLimit(p.message)}
}

// errorText renders opencode's error: {name, data{message}}, {message}, or
// a string.
func errorText(raw json.RawMessage) string {
	var obj struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		msg := obj.Data.Message
		if msg == "" {
			msg = obj.Message
		}
		switch {
		case msg != "" && obj.Name != "":
			return obj.Name + ": " + msg
		case msg != "":
			return msg
		case obj.Name != "":
			return obj.Name
		}
	}
	if s := cliagent.Text(raw); s != "" {
		return s
	}
	return "opencode reported an error"
}

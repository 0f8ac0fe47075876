package claude

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Parser turns Claude Code's stream-json output into events. The same
// format is spoken by Amp's --stream-json and Qwen Code's --output-format
// stream-json (see NewParserFor).
//
//   - system/init: an info event with the session and model.
//   - system/api_retry (Claude Code) and system/retry {data{attempt,
//     maxRetries, delayMs}} (Qwen Code): info events.
//   - assistant: a text event per text block and a tool-call event per
//     tool_use block (name, id, input). Several lines can carry blocks of
//     one message id; its usage counts once.
//   - user: a tool-result event per tool_result block.
//   - result: a usage event (total_cost_usd, usage); the final message is
//     its result text, or the last assistant text. An error result
//     (is_error, except running out of turns) fails the run with its
//     result text, its errors, or its error{message} (Qwen Code); with
//     api_error_status 429 or 529 or limit wording it is a rate limit.
//
// Unknown event types and lines that are not JSON are skipped.
type Parser struct {
	name      string
	tally     cliagent.Tally
	toolNames map[string]string
	msgUsage  map[string]agent.Usage
	msgOrder  []string
	sawResult bool
	final     string
	failed    bool
	message   string
	limited   bool
}

var _ cliagent.Parser = (*Parser)(nil)

// NewParser returns a parser for one run of Claude Code.
func NewParser() *Parser { return NewParserFor(Name) }

// NewParserFor returns a parser for one run of the agent name, another
// CLI that speaks Claude Code's stream-json; its info events name it.
func NewParserFor(name string) *Parser {
	return &Parser{name: name, toolNames: map[string]string{}, msgUsage: map[string]agent.Usage{}}
}

type streamLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Model     string          `json:"model"`
	Message   json.RawMessage `json:"message"`

	IsError        bool              `json:"is_error"`
	Result         json.RawMessage   `json:"result"`
	TotalCostUSD   float64           `json:"total_cost_usd"`
	Usage          *wireUsage        `json:"usage"`
	NumTurns       int               `json:"num_turns"`
	APIErrorStatus json.RawMessage   `json:"api_error_status"`
	Errors         []json.RawMessage `json:"errors"`

	Attempt     int             `json:"attempt"`
	MaxRetries  int             `json:"max_retries"`
	ErrorStatus json.RawMessage `json:"error_status"`
	Error       json.RawMessage `json:"error"`
	Data        *struct {
		Attempt    int   `json:"attempt"`
		MaxRetries int   `json:"maxRetries"`
		DelayMs    int64 `json:"delayMs"`
	} `json:"data"`
}

type wireMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Usage   *wireUsage      `json:"usage"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

func (u *wireUsage) usage() agent.Usage {
	if u == nil {
		return agent.Usage{}
	}
	return agent.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

// Line parses one line of stream-json.
func (p *Parser) Line(line string, emit func(agent.Event)) {
	var l streamLine
	if !cliagent.DecodeLine(line, &l) {
		return
	}
	out := func(e agent.Event) { p.tally.Emit(emit, e) }
	switch l.Type {
	case "system":
		p.system(l, out)
	case "assistant":
		p.assistant(l.Message, out)
	case "user":
		p.user(l.Message, out)
	case "result":
		p.result(l, out)
	}
}

func (p *Parser) system(l streamLine, out func(agent.Event)) {
	switch l.Subtype {
	case "init":
		out(agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("%s session %s, model %s", p.name, l.SessionID, l.Model)})
	case "api_retry":
		out(agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("%s retrying the API (attempt %d of %d, status %s, %s)",
			p.name, l.Attempt, l.MaxRetries, cliagent.Message(l.ErrorStatus), cliagent.Message(l.Error))})
	case "retry":
		if d := l.Data; d != nil {
			out(agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("%s retrying the API in %s (attempt %d of %d)",
				p.name, time.Duration(d.DelayMs)*time.Millisecond, d.Attempt, d.MaxRetries)})
		}
	}
}

func (p *Parser) assistant(raw json.RawMessage, out func(agent.Event)) {
	var m wireMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	if m.Usage != nil {
		if _, seen := p.msgUsage[m.ID]; !seen {
			p.msgOrder = append(p.msgOrder, m.ID)
		}
		p.msgUsage[m.ID] = m.Usage.usage() // the latest line of a message wins
	}
	for _, b := range blocks(m.Content) {
		switch b.Type {
		case "text":
			if b.Text != "" {
				out(agent.Event{Kind: agent.KindText, Text: b.Text})
			}
		case "tool_use", "server_tool_use":
			p.toolNames[b.ID] = b.Name
			input := b.Input
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			out(agent.Event{Kind: agent.KindToolCall, Tool: b.Name, ToolID: b.ID, Input: input})
		}
	}
}

func (p *Parser) user(raw json.RawMessage, out func(agent.Event)) {
	var m wireMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	for _, b := range blocks(m.Content) {
		if b.Type != "tool_result" {
			continue
		}
		out(agent.Event{Kind: agent.KindToolResult, Tool: p.toolNames[b.ToolUseID], ToolID: b.ToolUseID,
			Text: contentText(b.Content), IsError: b.IsError})
	}
}

// limitResult matches the result texts Claude Code prints when a
// subscription's usage limit is hit, which can come as a non-error result.
var limitResult = regexp.MustCompile(`(?i)usage limit reached\|\d{9,}|hit your (usage )?limit|limit reached\s*[∙·•|-]\s*resets`)

func (p *Parser) result(l streamLine, out func(agent.Event)) {
	p.sawResult = true
	u := l.Usage.usage()
	u.CostUSD = l.TotalCostUSD
	p.tally.Usage = u
	out(agent.Event{Kind: agent.KindUsage, Usage: &u})
	text := cliagent.Message(l.Result)
	status := cliagent.Message(l.APIErrorStatus)
	if l.IsError && l.Subtype != "error_max_turns" {
		msg := text
		if msg == "" {
			var errs []string
			for _, e := range l.Errors {
				errs = append(errs, cliagent.Message(e))
			}
			msg = strings.Join(errs, "; ")
		}
		if msg == "" {
			msg = cliagent.Message(l.Error)
		}
		if msg == "" {
			msg = l.Subtype
		}
		if status != "" && !strings.Contains(msg, status) {
			msg = "API error " + status + ": " + msg
		}
		p.failed, p.message = true, msg
		p.limited = status == "429" || status == "529" || agent.IsRateLimit(msg)
		out(agent.Event{Kind: agent.KindError, Text: msg})
		return
	}
	if l.Subtype == "error_max_turns" {
		out(agent.Event{Kind: agent.KindError, Text: fmt.Sprintf("claude stopped after %d turns (max turns)", l.NumTurns)})
	}
	if limitResult.MatchString(text) && len(text) < 500 {
		p.failed, p.message, p.limited = true, text, true
		return
	}
	p.final = text
}

// Outcome returns the run's result and failure.
func (p *Parser) Outcome() cliagent.Outcome {
	if !p.sawResult {
		var u agent.Usage
		for _, id := range p.msgOrder {
			u = u.Add(p.msgUsage[id])
		}
		p.tally.Usage = u
	}
	return cliagent.Outcome{Result: p.tally.Result(p.final), Failed: p.failed, Message: p.message, RateLimited: p.limited}
}

// blocks decodes message content: a list of blocks or a plain string.
func blocks(raw json.RawMessage) []block {
	var bs []block
	if json.Unmarshal(raw, &bs) == nil {
		return bs
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return []block{{Type: "text", Text: s}}
	}
	return nil
}

// contentText returns the text of a tool result's content: a string or a
// list of blocks.
func contentText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" || b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

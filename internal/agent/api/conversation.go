package api

import (
	"encoding/json"

	"github.com/ralph-harness/ralph/internal/agent"
)

// Roles of a conversation message.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// message is one message of a conversation, in a form both providers
// translate into their own: user text, assistant text with tool calls,
// or the tool results that answer them.
type message struct {
	Role    string
	Text    string
	Calls   []toolCall
	Results []toolResult
}

// toolCall is a tool call the model made.
type toolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// toolResult answers a toolCall.
type toolResult struct {
	ID      string
	Name    string
	Content string
	IsError bool
	// Trimmed marks a result whose content was replaced to fit the
	// context window.
	Trimmed bool
}

// turnRequest is one request to the model.
type turnRequest struct {
	System    string
	Messages  []message
	Tools     []toolDef // nil for a one-shot completion
	MaxTokens int64
}

// reply is one model reply.
type reply struct {
	Text  string
	Calls []toolCall
	Usage agent.Usage
	// Stop is the provider's stop or finish reason.
	Stop string
}

// trimmedNote replaces tool results trimmed to fit the context window.
const trimmedNote = "[trimmed to fit the context window]"

// trimOldest replaces the content of the oldest half (at least one) of
// the tool results not yet trimmed with trimmedNote, and reports how many
// it trimmed.
func trimOldest(msgs []message) int {
	var refs []*toolResult
	for i := range msgs {
		for j := range msgs[i].Results {
			r := &msgs[i].Results[j]
			if !r.Trimmed && len(r.Content) > len(trimmedNote) {
				refs = append(refs, r)
			}
		}
	}
	n := max(len(refs)/2, min(len(refs), 1))
	for _, r := range refs[:n] {
		r.Content, r.Trimmed = trimmedNote, true
	}
	return n
}

// validInput returns in when it is a JSON object and {} otherwise, so a
// garbled call can still be sent back to the provider with its result.
func validInput(in json.RawMessage) json.RawMessage {
	var v map[string]any
	if len(in) == 0 || json.Unmarshal(in, &v) != nil {
		return json.RawMessage("{}")
	}
	return in
}

// toolArgs is a call's input as a JSON object for events and tools.
func toolArgs(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	return in
}

// Package agent defines the one interface every coding-agent backend
// implements, and the events backends turn their tool's output into.
//
// A backend runs one iteration: a fresh invocation of its agent with the
// prompt ralph built, in the workspace directory. While it runs it reports
// what the agent does as Events (text, tool calls with their input, tool
// results, usage and cost, rate limits, errors); when it ends it returns a
// Result with the agent's final message, so the engine can look for the
// completion promise in that message only.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-harness/ralph/internal/sandbox"
)

// Agent is a coding-agent backend.
type Agent interface {
	// Name is the backend's name as the --agent flag spells it.
	Name() string
	// Run performs one iteration. It calls emit for every event, in order,
	// from the calling goroutine or one goroutine at a time. It returns an
	// error only when the agent could not do its work: ErrNotFound for a
	// missing binary, a *RateLimitError for a rate or usage limit, or
	// another error for anything else (authentication, a crash).
	Run(ctx context.Context, req Request, emit func(Event)) (Result, error)
}

// Request is what one iteration asks of the agent.
type Request struct {
	// Dir is the workspace root, the agent's working directory.
	Dir string
	// System is ralph's system prompt: the workflow, persona and
	// constraints. Backends pass it as a system prompt where their tool
	// has one (never as user text).
	System string
	// Prompt is the user prompt: the task, plan, feedback and history.
	Prompt string
	// Iteration is the 1-based iteration number within the task.
	Iteration int
	// IdleTimeout kills the agent when it prints nothing for this long;
	// zero means no idle limit.
	IdleTimeout time.Duration
	// Sandbox confines the agent's process (internal/sandbox); nil runs
	// it unconfined.
	Sandbox *sandbox.Settings
}

// Kind says what an Event reports.
type Kind string

// Event kinds.
const (
	KindText       Kind = "text"        // assistant text
	KindToolCall   Kind = "tool_call"   // the agent called a tool
	KindToolResult Kind = "tool_result" // a tool returned
	KindUsage      Kind = "usage"       // tokens and cost
	KindRateLimit  Kind = "rate_limit"  // the provider limited the agent
	KindError      Kind = "error"       // the agent or its provider reported an error
	KindInfo       Kind = "info"        // anything else worth showing (session start, model)
	KindSandbox    Kind = "sandbox"     // the sandbox refused an access the agent tried (Text names the path)
)

// Event is one thing the agent did, normalised across backends.
type Event struct {
	Kind Kind `json:"kind"`
	// Text is the assistant text, tool result output, error or info message.
	Text string `json:"text,omitempty"`
	// Tool is the tool's name for tool calls and results.
	Tool string `json:"tool,omitempty"`
	// ToolID links a tool result to its call, where the backend has one.
	ToolID string `json:"tool_id,omitempty"`
	// Input is the tool call's input as JSON.
	Input json.RawMessage `json:"input,omitempty"`
	// IsError marks a failed tool result.
	IsError bool `json:"is_error,omitempty"`
	// Usage carries tokens and cost for usage events.
	Usage *Usage `json:"usage,omitempty"`
	// ResetAt is when a rate limit lifts, when the provider said.
	ResetAt time.Time `json:"reset_at,omitzero"`
}

// Usage is tokens and cost. Cost is in US dollars as the backend reports
// it (zero when it does not).
type Usage struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		CostUSD:          u.CostUSD + v.CostUSD,
	}
}

// Result is how an iteration ended.
type Result struct {
	// Final is the agent's final message: the last assistant text of the
	// invocation. The completion promise counts only at its end.
	Final string
	// ToolCalls counts the tool calls the agent made.
	ToolCalls int
	// Usage is the iteration's total usage.
	Usage Usage
}

// ErrNotFound means the agent's program is not installed or not on PATH.
var ErrNotFound = errors.New("agent program not found")

// RateLimitError means the provider refused work for now. The engine waits
// until ResetAt (or backs off when it is zero) and retries the iteration;
// a rate limit never counts as a failure or a stall.
type RateLimitError struct {
	ResetAt time.Time
	Message string
}

func (e *RateLimitError) Error() string {
	if e.ResetAt.IsZero() {
		return fmt.Sprintf("rate limited: %s", e.Message)
	}
	return fmt.Sprintf("rate limited until %s: %s", e.ResetAt.Format(time.RFC3339), e.Message)
}

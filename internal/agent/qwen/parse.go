package qwen

import (
	"github.com/ralph-harness/ralph/internal/agent/claude"
)

// NewParser returns a parser for one run. Qwen Code's stream-json is
// Claude Code's: system/init, assistant messages with text and tool_use
// blocks (each with its usage), user messages with tool_result blocks,
// system/retry while it waits out a rate limit, and a result with the
// summed usage — or, when the run failed, is_error and error{message}
// ("[API Error: 429 …]"). Qwen Code reports no cost.
func NewParser() *claude.Parser { return claude.NewParserFor(Name) }

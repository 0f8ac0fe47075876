package claude

import (
	"slices"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
)

// A single answer offers no tools and replaces Claude Code's system
// prompt; nothing of an iteration's permissions comes along.
func TestAnswerArgs(t *testing.T) {
	a := New(agent.Config{Binary: "claude", Model: "m", Args: []string{"--settings", "s.json"}}, nil)
	got := a.AnswerArgs("SYSTEM")
	want := []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--system-prompt", "SYSTEM",
		"--tools", "", "--max-turns", "1", "--model", "m", "--settings", "s.json"}
	if !slices.Equal(got, want) {
		t.Errorf("AnswerArgs = %q\nwant %q", got, want)
	}
	if !a.Answers() {
		t.Error("claude does not answer single questions")
	}
}

package gemini

import (
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// realConfig returns a Config running the real gemini against srv from an
// isolated HOME, recording its stream when asked.
func realConfig(t *testing.T, srv *testutil.GeminiServer, record string) agent.Config {
	bin := testutil.Record(t, testutil.GeminiBin(t), record)
	return agent.Config{Binary: bin, Env: srv.GeminiHome(t)}
}

// The real Gemini CLI, in a workspace nobody trusted, writes a file with
// write_file and runs a command with run_shell_command; the events carry
// both with their input and result, and token usage.
func TestRealGeminiWritesFile(t *testing.T) {
	clitest.WritesFile(t, clitest.WriteFile[*testutil.GeminiServer]{
		NewAgent:  newAgent,
		NewServer: testutil.NewGemini,
		Config:    realConfig,
		Record:    "real-success.jsonl",
		WriteTool: "write_file", ShellTool: "run_shell_command",
		Usage: func(u agent.Usage) bool { return u.InputTokens >= 300 && u.OutputTokens >= 60 && u.CostUSD == 0 },
	})
}

// A provider that answers 429 RESOURCE_EXHAUSTED with a per-day quota
// surfaces as a RateLimitError carrying Gemini CLI's own message.
func TestRealGeminiRateLimited(t *testing.T) {
	srv := testutil.NewGemini(t, testutil.RateLimited("30", "Resource has been exhausted (e.g. check quota)."))
	clitest.RateLimited(t, newAgent, realConfig(t, srv, "real-ratelimit.jsonl"), "exhausted your daily quota")
}

package copilot

import (
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// realConfig returns a Config running the real copilot against srv as a
// bring-your-own-key provider from an isolated HOME, recording its stream
// when asked.
func realConfig(t *testing.T, srv *testutil.ChatServer, record string) agent.Config {
	bin := testutil.Record(t, testutil.CopilotBin(t), record)
	return agent.Config{Binary: bin, Env: srv.CopilotEnv(t)}
}

// The real Copilot CLI, with no GitHub login, writes a file and runs a
// command against the fake OpenAI endpoint; the events carry both with
// their input and result, ralph's system prompt reaches the model through
// an instructions directory, and the usage file gives the tokens.
func TestRealCopilotWritesFile(t *testing.T) {
	clitest.WritesFile(t, clitest.WriteFile[*testutil.ChatServer]{
		NewAgent:  newAgent,
		NewServer: testutil.NewChat,
		Config:    realConfig,
		Record:    "real-success.jsonl",
		WriteTool: "create", ShellTool: "bash",
		Usage: func(u agent.Usage) bool { return u.InputTokens == 300 && u.OutputTokens == 60 && u.CostUSD == 0 },
	})
}

// A provider that keeps answering 429: Copilot CLI retries five times
// (waiting retry-after each time), then reports a rate_limit session
// error, which ralph turns into a RateLimitError.
func TestRealCopilotRateLimited(t *testing.T) {
	srv := testutil.NewChat(t, testutil.RateLimited("1", "You exceeded your current quota, please check your plan and billing details."))
	clitest.RateLimited(t, newAgent, realConfig(t, srv, "real-ratelimit.jsonl"), "You exceeded your current quota")
}

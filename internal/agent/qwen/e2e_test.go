package qwen

import (
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// realConfig returns a Config running the real qwen against srv from an
// isolated HOME, recording its stream when asked.
func realConfig(t *testing.T, srv *testutil.ChatServer, record string) agent.Config {
	bin := testutil.Record(t, testutil.QwenBin(t), record)
	env, args := srv.QwenEnv(t)
	return agent.Config{Binary: bin, Env: env, Args: args, Model: "fake-coder"}
}

// The real Qwen Code writes a file and runs a command against the fake
// OpenAI endpoint; the events carry both with their input and result, and
// token usage; ralph's system prompt is appended to Qwen Code's.
func TestRealQwenWritesFile(t *testing.T) {
	clitest.WritesFile(t, clitest.WriteFile[*testutil.ChatServer]{
		NewAgent:  newAgent,
		NewServer: testutil.NewChat,
		Config:    realConfig,
		Record:    "real-success.jsonl",
		WriteTool: "write_file", ShellTool: "run_shell_command",
		Usage: func(u agent.Usage) bool { return u.InputTokens > 0 && u.OutputTokens > 0 },
	})
}

// A provider that keeps answering 429 surfaces as a RateLimitError once
// Qwen Code stops retrying.
func TestRealQwenRateLimited(t *testing.T) {
	srv := testutil.NewChat(t, testutil.RateLimited("1", "You exceeded your current quota, please check your plan and billing details."))
	clitest.RateLimited(t, newAgent, realConfig(t, srv, "real-ratelimit.jsonl"), "")
	t.Logf("%d requests", len(srv.Requests()))
}

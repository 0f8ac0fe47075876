package codex

import (
	"errors"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/testutil"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

// realConfig returns a Config running the real codex against srv from an
// isolated CODEX_HOME and HOME, recording its stream when asked.
func realConfig(t *testing.T, srv *testutil.ResponsesServer, record string) agent.Config {
	bin := testutil.Record(t, testutil.CodexBin(t), record)
	env := append(srv.CodexHome(t), "HOME="+t.TempDir())
	return agent.Config{Binary: bin, Env: env}
}

// The real Codex writes a file through apply_patch and runs a command in
// its sandbox; the events carry both with their input, and token usage.
func TestRealCodexWritesFile(t *testing.T) {
	clitest.WritesFile(t, clitest.WriteFile[*testutil.ResponsesServer]{
		NewAgent:     newAgent,
		NewServer:    testutil.NewResponses,
		Config:       realConfig,
		Record:       "success.jsonl",
		RelativePath: true,
		WriteTool:    "file_change", ShellTool: "command_execution",
		Usage: func(u agent.Usage) bool { return u.InputTokens == 300 && u.OutputTokens == 60 && u.CostUSD == 0 },
	})
}

// A turn the provider fails (response.failed) fails the run with its
// message.
func TestRealCodexTurnFailed(t *testing.T) {
	srv := testutil.NewResponses(t, testutil.Turn{Failed: true, Message: "the model exploded", Repeat: -1})
	_, ev, err := clitest.RunReal(t, newAgent, realConfig(t, srv, "failed.jsonl"), agent.Request{Dir: testutil.GitRepo(t), Prompt: "do it"})
	var rl *agent.RateLimitError
	if err == nil || errors.As(err, &rl) || !strings.Contains(err.Error(), "the model exploded") {
		t.Fatalf("err = %v, want the provider's failure", err)
	}
	if len(ev.Of(agent.KindError)) == 0 {
		t.Error("no error event")
	}
}

// A provider that keeps answering 429 surfaces as a RateLimitError.
func TestRealCodexRateLimited(t *testing.T) {
	srv := testutil.NewResponses(t, testutil.RateLimited("30", "Rate limit reached for gpt-5.5. Please try again in 30s."))
	clitest.RateLimited(t, newAgent, realConfig(t, srv, "ratelimit.jsonl"), "429")
}

// A usage limit reported in response.failed, as OpenAI does for plans.
func TestRealCodexUsageLimitFailed(t *testing.T) {
	srv := testutil.NewResponses(t, testutil.Turn{Failed: true, Code: "rate_limit_exceeded",
		Message: "You've hit your usage limit. Try again in 2 hours.", Repeat: -1})
	clitest.RateLimited(t, newAgent, realConfig(t, srv, "usagelimit.jsonl"), "You've hit your usage limit")
}

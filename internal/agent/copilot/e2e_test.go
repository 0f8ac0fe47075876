package copilot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func run(t *testing.T, cfg agent.Config, req agent.Request) (agent.Result, *clitest.Events, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ev clitest.Events
	if req.IdleTimeout == 0 {
		req.IdleTimeout = time.Minute
	}
	res, err := New(cfg, nil).Run(ctx, req, ev.Emit)
	return res, &ev, err
}

// The real Copilot CLI, with no GitHub login, writes a file and runs a
// command against the fake OpenAI endpoint; the events carry both with
// their input and result, ralph's system prompt reaches the model through
// an instructions directory, and the usage file gives the tokens.
func TestRealCopilotWritesFile(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewChat(t,
		testutil.Calls("I will write the file.", testutil.WriteFile(filepath.Join(dir, "hello.txt"), "hello world\n")),
		testutil.Calls("", testutil.Shell("cat", "hello.txt")),
		testutil.Text("All done. <promise>COMPLETE</promise>"),
	)
	res, ev, err := run(t, realConfig(t, srv, "real-success.jsonl"), agent.Request{
		Dir: dir, System: "RALPH-SYSTEM: follow the \"plan\".\nSecond line.", Prompt: "RALPH-TASK: write hello.txt",
	})
	if err != nil {
		t.Fatalf("%v\nrequests: %d", err, len(srv.Requests()))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello world\n" {
		t.Fatalf("hello.txt = %q, %v\nresults: %+v", b, err, ev.Of(agent.KindToolResult))
	}
	calls := ev.Of(agent.KindToolCall)
	if len(calls) != 2 || calls[0].Tool != "create" || calls[1].Tool != "bash" {
		t.Fatalf("tool calls = %+v", calls)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 2 || results[0].IsError || results[1].IsError || !strings.Contains(results[1].Text, "hello world") {
		t.Errorf("tool results = %+v", results)
	}
	if res.ToolCalls != 2 || res.Final != "All done. <promise>COMPLETE</promise>" {
		t.Errorf("result = %+v", res)
	}
	if res.Usage.InputTokens != 300 || res.Usage.OutputTokens != 60 || res.Usage.CostUSD != 0 {
		t.Errorf("usage = %+v", res.Usage)
	}
	reqs := srv.Scripted()
	if len(reqs) != 3 {
		t.Fatalf("scripted requests = %d, want 3", len(reqs))
	}
	if !strings.Contains(reqs[0].System, "RALPH-SYSTEM: follow the \"plan\".\nSecond line.") {
		t.Errorf("system prompt does not carry ralph's")
	}
	if strings.Contains(reqs[0].UserText, "RALPH-SYSTEM") || !strings.Contains(reqs[0].UserText, "RALPH-TASK: write hello.txt") {
		t.Errorf("user text = %.500q", reqs[0].UserText)
	}
}

// A provider that keeps answering 429: Copilot CLI retries five times
// (waiting retry-after each time), then reports a rate_limit session
// error, which ralph turns into a RateLimitError.
func TestRealCopilotRateLimited(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewChat(t, testutil.RateLimited("1", "You exceeded your current quota, please check your plan and billing details."))
	_, ev, err := run(t, realConfig(t, srv, "real-ratelimit.jsonl"), agent.Request{Dir: dir, Prompt: "do it"})
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) || !strings.Contains(rl.Message, "You exceeded your current quota") {
		t.Fatalf("err = %v, want a RateLimitError with the provider's message", err)
	}
	if len(ev.Of(agent.KindRateLimit)) != 1 {
		t.Errorf("rate-limit events = %+v", ev.Of(agent.KindRateLimit))
	}
}

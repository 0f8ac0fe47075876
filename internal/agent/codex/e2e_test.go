package codex

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

// realConfig returns a Config running the real codex against srv from an
// isolated CODEX_HOME and HOME, recording its stream when asked.
func realConfig(t *testing.T, srv *testutil.ResponsesServer, record string) agent.Config {
	bin := testutil.Record(t, testutil.CodexBin(t), record)
	env := append(srv.CodexHome(t), "HOME="+t.TempDir())
	return agent.Config{Binary: bin, Env: env}
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

// The real Codex writes a file through apply_patch and runs a command in
// its sandbox; the events carry both with their input, and token usage.
func TestRealCodexWritesFile(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t,
		testutil.Calls("I will write the file.", testutil.WriteFile("hello.txt", "hello world\n")),
		testutil.Calls("", testutil.Shell("cat", "hello.txt")),
		testutil.Text("All done. <promise>COMPLETE</promise>"),
	)
	res, ev, err := run(t, realConfig(t, srv, "success.jsonl"), agent.Request{
		Dir: dir, System: "RALPH-SYSTEM: follow the \"plan\".\nSecond line.", Prompt: "RALPH-TASK: write hello.txt",
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello world\n" {
		t.Fatalf("hello.txt = %q, %v", b, err)
	}
	calls := ev.Of(agent.KindToolCall)
	if len(calls) != 2 || calls[0].Tool != "file_change" || calls[1].Tool != "command_execution" {
		t.Fatalf("tool calls = %+v", calls)
	}
	if !strings.Contains(string(calls[0].Input), "hello.txt") || !strings.Contains(string(calls[1].Input), "cat hello.txt") {
		t.Errorf("tool inputs = %s, %s", calls[0].Input, calls[1].Input)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 2 || !strings.Contains(results[1].Text, "hello world") || results[1].IsError {
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
		t.Errorf("system prompt does not carry ralph's: %.300q", reqs[0].System)
	}
	if strings.Contains(reqs[0].UserText, "RALPH-SYSTEM") || !strings.Contains(reqs[0].UserText, "RALPH-TASK: write hello.txt") {
		t.Errorf("user text = %.500q", reqs[0].UserText)
	}
}

// A turn the provider fails (response.failed) fails the run with its
// message.
func TestRealCodexTurnFailed(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t, testutil.Turn{Failed: true, Message: "the model exploded", Repeat: -1})
	_, ev, err := run(t, realConfig(t, srv, "failed.jsonl"), agent.Request{Dir: dir, Prompt: "do it"})
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
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t, testutil.RateLimited("30", "Rate limit reached for gpt-5.5. Please try again in 30s."))
	_, ev, err := run(t, realConfig(t, srv, "ratelimit.jsonl"), agent.Request{Dir: dir, Prompt: "do it"})
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want a RateLimitError", err)
	}
	t.Logf("rate limit: %v", rl)
	if len(ev.Of(agent.KindRateLimit)) != 1 {
		t.Errorf("rate-limit events = %+v", ev.Of(agent.KindRateLimit))
	}
}

// A usage limit reported in response.failed, as OpenAI does for plans.
func TestRealCodexUsageLimitFailed(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewResponses(t, testutil.Turn{Failed: true, Code: "rate_limit_exceeded",
		Message: "You've hit your usage limit. Try again in 2 hours.", Repeat: -1})
	_, _, err := run(t, realConfig(t, srv, "usagelimit.jsonl"), agent.Request{Dir: dir, Prompt: "do it"})
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want a RateLimitError", err)
	}
	t.Logf("rate limit: %v", rl)
}

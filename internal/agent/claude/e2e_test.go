package claude

import (
	"context"
	"encoding/json"
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

// realConfig returns a Config running the real claude against srv, with
// HOME isolated, recording its stream to testdata/record when asked.
func realConfig(t *testing.T, srv *testutil.AnthropicServer, record string, env ...string) agent.Config {
	bin := testutil.Record(t, testutil.ClaudeBin(t), record)
	env = append(append(srv.Env(), "HOME="+t.TempDir()), env...)
	return agent.Config{Binary: bin, Env: env, Model: "claude-sonnet-4-5", MaxTurns: 10}
}

// The real Claude Code writes a file through its own Write tool and runs a
// command through Bash; the events carry both calls with their input, the
// tool results, usage with cost, and the final message.
func TestRealClaudeWritesFile(t *testing.T) {
	dir := testutil.GitRepo(t)
	target := filepath.Join(dir, "hello.txt")
	srv := testutil.NewAnthropic(t,
		testutil.Calls("I will write the file.", testutil.WriteFile(target, "hello world\n")),
		testutil.Calls("", testutil.Shell("cat", "hello.txt")),
		testutil.Text("All done. <promise>COMPLETE</promise>"),
	)
	a := New(realConfig(t, srv, "success.jsonl"), nil)
	var ev clitest.Events
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := a.Run(ctx, agent.Request{
		Dir: dir, System: "RALPH-SYSTEM: follow the plan.", Prompt: "RALPH-TASK: write hello.txt",
		IdleTimeout: time.Minute,
	}, ev.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hello world\n" {
		t.Fatalf("hello.txt = %q, %v", b, err)
	}
	calls := ev.Of(agent.KindToolCall)
	if len(calls) != 2 || calls[0].Tool != "Write" || calls[1].Tool != "Bash" {
		t.Fatalf("tool calls = %+v", calls)
	}
	var in struct{ FilePath, Content string }
	if err := json.Unmarshal(calls[0].Input, &struct {
		FilePath *string `json:"file_path"`
		Content  *string `json:"content"`
	}{&in.FilePath, &in.Content}); err != nil || in.FilePath != target || in.Content != "hello world\n" {
		t.Errorf("Write input = %s", calls[0].Input)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 2 || results[1].Tool != "Bash" || !strings.Contains(results[1].Text, "hello world") {
		t.Errorf("tool results = %+v", results)
	}
	if res.ToolCalls != 2 {
		t.Errorf("ToolCalls = %d, want 2", res.ToolCalls)
	}
	if res.Final != "All done. <promise>COMPLETE</promise>" {
		t.Errorf("Final = %q", res.Final)
	}
	if res.Usage.CostUSD <= 0 || res.Usage.InputTokens != 300 || res.Usage.OutputTokens != 60 {
		t.Errorf("Usage = %+v", res.Usage)
	}
	if len(ev.Of(agent.KindUsage)) != 1 {
		t.Errorf("usage events = %d, want 1", len(ev.Of(agent.KindUsage)))
	}
	reqs := srv.Scripted()
	if len(reqs) != 3 {
		t.Fatalf("scripted requests = %d, want 3", len(reqs))
	}
	if !strings.Contains(reqs[0].System, "RALPH-SYSTEM: follow the plan.") {
		t.Errorf("system prompt does not carry ralph's: %.300q", reqs[0].System)
	}
	if strings.Contains(reqs[0].UserText, "RALPH-SYSTEM") {
		t.Errorf("ralph's system prompt was sent as user text")
	}
	if !strings.Contains(reqs[0].UserText, "RALPH-TASK: write hello.txt") {
		t.Errorf("user text lacks the prompt: %.300q", reqs[0].UserText)
	}
}

// A provider that keeps answering 429 surfaces as a RateLimitError with the
// reset time from retry-after.
func TestRealClaudeRateLimited(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewAnthropic(t, testutil.RateLimited("120", "Number of request tokens has exceeded your per-minute rate limit"))
	a := New(realConfig(t, srv, "ratelimit.jsonl", "CLAUDE_CODE_MAX_RETRIES=0"), nil)
	var ev clitest.Events
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := a.Run(ctx, agent.Request{Dir: dir, System: "sys", Prompt: "do it", IdleTimeout: time.Minute}, ev.Emit)
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want a RateLimitError", err)
	}
	t.Logf("rate limit: %v", rl)
	if len(ev.Of(agent.KindRateLimit)) != 1 {
		t.Errorf("rate-limit events = %+v", ev.Of(agent.KindRateLimit))
	}
	if len(srv.Scripted()) == 0 {
		t.Error("claude never called the model")
	}
}

// An API error that is not a limit fails the run with the provider's
// message.
func TestRealClaudeAPIError(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewAnthropic(t, testutil.Turn{Status: 400, Message: "prompt is malformed", Repeat: -1})
	a := New(realConfig(t, srv, "apierror.jsonl", "CLAUDE_CODE_MAX_RETRIES=0"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := a.Run(ctx, agent.Request{Dir: dir, Prompt: "do it", IdleTimeout: time.Minute}, nil)
	var rl *agent.RateLimitError
	if err == nil || errors.As(err, &rl) {
		t.Fatalf("err = %v, want a plain error", err)
	}
	if !strings.Contains(err.Error(), "prompt is malformed") {
		t.Errorf("err = %v, want the provider's message", err)
	}
}

package claude

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent/clitest"
	"github.com/ralph-harness/ralph/internal/sandbox"
	"github.com/ralph-harness/ralph/internal/testutil"
)

func newAgent(cfg agent.Config) agent.Agent { return New(cfg, nil) }

// realConfig returns a Config running the real claude against srv, with
// HOME isolated, recording its stream to testdata/record when asked.
func realConfig(t *testing.T, srv *testutil.AnthropicServer, record string, env ...string) agent.Config {
	bin := testutil.Record(t, testutil.ClaudeBin(t), record)
	env = append(append(srv.Env(), "HOME="+t.TempDir()), env...)
	return agent.Config{Binary: bin, Env: env, Model: "claude-sonnet-4-5", MaxTurns: 10}
}

// The real Claude Code writes a file through its own Write tool and runs a
// command through Bash; the events carry both calls with their input, the
// tool results, one usage event with cost, and the final message.
func TestRealClaudeWritesFile(t *testing.T) {
	w := clitest.WritesFile(t, clitest.WriteFile[*testutil.AnthropicServer]{
		NewAgent:  newAgent,
		NewServer: testutil.NewAnthropic,
		Config: func(t *testing.T, srv *testutil.AnthropicServer, record string) agent.Config {
			return realConfig(t, srv, record)
		},
		Record:    "success.jsonl",
		WriteTool: "Write", ShellTool: "Bash",
		Usage: func(u agent.Usage) bool { return u.CostUSD > 0 && u.InputTokens == 300 && u.OutputTokens == 60 },
	})
	ev := w.Events
	write := ev.Of(agent.KindToolCall)[0]
	var in struct{ FilePath, Content string }
	if err := json.Unmarshal(write.Input, &struct {
		FilePath *string `json:"file_path"`
		Content  *string `json:"content"`
	}{&in.FilePath, &in.Content}); err != nil || in.FilePath != w.Target || in.Content != "hello world\n" {
		t.Errorf("Write input = %s", write.Input)
	}
	if len(ev.Of(agent.KindUsage)) != 1 {
		t.Errorf("usage events = %d, want 1", len(ev.Of(agent.KindUsage)))
	}
}

// Confined, the real Claude Code's Bash tool is refused the private key in
// $HOME/.ssh: the tool result says Permission denied, a sandbox event
// names the key, and the session goes on.
func TestRealClaudeShellDeniedSSH(t *testing.T) {
	clitest.DeniedKey(t, clitest.WriteFile[*testutil.AnthropicServer]{
		NewAgent:  newAgent,
		NewServer: testutil.NewAnthropic,
		Config: func(t *testing.T, srv *testutil.AnthropicServer, record string) agent.Config {
			return realConfig(t, srv, record)
		},
		ShellTool: "Bash",
	})
}

// With [sandbox] network = "model" the real Claude Code still reaches its
// model endpoint (the port of ANTHROPIC_BASE_URL), and its Bash tool may
// not connect to another port.
func TestRealClaudeNetworkModel(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "reached") }))
	defer other.Close()
	port := strconv.Itoa(other.Listener.Addr().(*net.TCPAddr).Port)
	srv := testutil.NewAnthropic(t,
		testutil.Calls("", testutil.Shell("sh", "-c", "curl -sS --max-time 5 http://127.0.0.1:"+port+"/ || echo refused")),
		testutil.Text(clitest.Final))
	s := clitest.Sandbox(t)
	s.Network = sandbox.NetworkModel
	res, ev, err := clitest.RunReal(t, newAgent, realConfig(t, srv, ""), agent.Request{Dir: testutil.GitRepo(t), Prompt: "connect", Sandbox: s})
	if err != nil {
		t.Fatal(err)
	}
	if res.Final != clitest.Final {
		t.Errorf("final = %q, want the model's answer", res.Final)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 1 || !strings.Contains(results[0].Text, "refused") || strings.Contains(results[0].Text, "reached") {
		t.Errorf("tool results = %+v, want the connection to port %s refused", results, port)
	}
}

// A provider that keeps answering 429 surfaces as a RateLimitError with the
// reset time from retry-after.
func TestRealClaudeRateLimited(t *testing.T) {
	srv := testutil.NewAnthropic(t, testutil.RateLimited("120", "Number of request tokens has exceeded your per-minute rate limit"))
	clitest.RateLimited(t, newAgent, realConfig(t, srv, "ratelimit.jsonl", "CLAUDE_CODE_MAX_RETRIES=0"), "exceeded your per-minute rate limit")
	if len(srv.Scripted()) == 0 {
		t.Error("claude never called the model")
	}
}

// An API error that is not a limit fails the run with the provider's
// message.
func TestRealClaudeAPIError(t *testing.T) {
	dir := testutil.GitRepo(t)
	srv := testutil.NewAnthropic(t, testutil.Turn{Status: 400, Message: "prompt is malformed", Repeat: -1})
	_, _, err := clitest.RunReal(t, newAgent, realConfig(t, srv, "apierror.jsonl", "CLAUDE_CODE_MAX_RETRIES=0"), agent.Request{Dir: dir, Prompt: "do it"})
	var rl *agent.RateLimitError
	if err == nil || errors.As(err, &rl) {
		t.Fatalf("err = %v, want a plain error", err)
	}
	if !strings.Contains(err.Error(), "prompt is malformed") {
		t.Errorf("err = %v, want the provider's message", err)
	}
}

package clitest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/sandbox"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// Server is a fake model provider from testutil that records what the
// agent sent it.
type Server interface {
	Requests() []testutil.Request
	Scripted() []testutil.Request
}

// RunReal runs the backend newAgent builds from cfg on req, with two
// minutes to finish and, unless req sets one, a minute's idle timeout,
// confined by the sandbox as ralph runs it (Sandbox) unless req sets
// another, and collects what it emitted.
func RunReal(t *testing.T, newAgent func(agent.Config) agent.Agent, cfg agent.Config, req agent.Request) (agent.Result, *Events, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ev Events
	if req.IdleTimeout == 0 {
		req.IdleTimeout = time.Minute
	}
	if req.Sandbox == nil {
		req.Sandbox = Sandbox(t)
	}
	res, err := newAgent(cfg).Run(ctx, req, ev.Emit)
	return res, &ev, err
}

// Final is the last message of the scripted session WritesFile plays.
const Final = "All done. <promise>COMPLETE</promise>"

// WriteFile describes a real CLI for WritesFile: what is specific to it.
type WriteFile[S Server] struct {
	// NewAgent builds the backend.
	NewAgent func(agent.Config) agent.Agent
	// NewServer starts the fake provider the CLI talks to.
	NewServer func(testing.TB, ...testutil.Turn) S
	// Config runs the real CLI against srv, recording its stream to
	// testdata/record when asked.
	Config func(t *testing.T, srv S, record string) agent.Config
	// Record names the file in testdata the stream is recorded to.
	Record string
	// RelativePath makes the model name the file relative to the
	// workspace rather than by its absolute path.
	RelativePath bool
	// WriteTool and ShellTool are the names the CLI gives its tools.
	WriteTool, ShellTool string
	// Usage reports whether the usage the run reported is right.
	Usage func(agent.Usage) bool
}

// WritesFile runs the real CLI in a fresh git repository on a scripted
// session: the model writes hello.txt, runs `cat hello.txt` (then a short
// sleep), and answers
// Final. It checks that the file was written; that the events carry both
// tool calls with their input, and their results, without errors; that
// the result counts two calls, carries the final message and the usage
// c.Usage accepts; and that ralph's system prompt (quotes and newlines
// included) reached the model's system prompt and not the user text,
// which carries the task. It returns what the run gave, for the checks
// specific to the CLI.
func WritesFile[S Server](t *testing.T, c WriteFile[S]) Wrote[S] {
	t.Helper()
	const system = "RALPH-SYSTEM: follow the \"plan\".\nSecond line."
	dir := testutil.GitRepo(t)
	target := filepath.Join(dir, "hello.txt")
	named := target
	if c.RelativePath {
		named = "hello.txt"
	}
	srv := c.NewServer(t,
		testutil.Calls("I will write the file.", testutil.WriteFile(named, "hello world\n")),
		// The sleep after the output: Qwen Code 0.24 (and CLIs sharing its
		// shell service) settle a command on its exit event without
		// draining its pipe, so under load a command that exits at once
		// can report no output. The check is of ralph's parsing, not
		// that race.
		testutil.Calls("", testutil.Shell("sh", "-c", "cat hello.txt; sleep 0.3")),
		testutil.Text(Final),
	)
	res, ev, err := RunReal(t, c.NewAgent, c.Config(t, srv, c.Record), agent.Request{
		Dir: dir, System: system, Prompt: "RALPH-TASK: write hello.txt",
	})
	if err != nil {
		t.Fatalf("%v\nrequests: %d", err, len(srv.Requests()))
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hello world\n" {
		t.Fatalf("hello.txt = %q, %v\nresults: %+v", b, err, ev.Of(agent.KindToolResult))
	}
	calls := ev.Of(agent.KindToolCall)
	if len(calls) != 2 || calls[0].Tool != c.WriteTool || calls[1].Tool != c.ShellTool {
		t.Fatalf("tool calls = %+v", calls)
	}
	if !strings.Contains(string(calls[0].Input), "hello.txt") || !strings.Contains(string(calls[1].Input), "cat hello.txt") {
		t.Errorf("tool inputs = %s, %s", calls[0].Input, calls[1].Input)
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 2 || results[0].IsError || results[1].IsError ||
		results[1].Tool != c.ShellTool || !strings.Contains(results[1].Text, "hello world") {
		t.Errorf("tool results = %+v", results)
	}
	if res.ToolCalls != 2 || res.Final != Final {
		t.Errorf("result = %+v", res)
	}
	if !c.Usage(res.Usage) {
		t.Errorf("usage = %+v", res.Usage)
	}
	reqs := srv.Scripted()
	if len(reqs) != 3 {
		t.Fatalf("scripted requests = %d, want 3", len(reqs))
	}
	if !strings.Contains(reqs[0].System, system) {
		t.Errorf("system prompt does not carry ralph's: %.300q", reqs[0].System)
	}
	if strings.Contains(reqs[0].UserText, "RALPH-SYSTEM") || !strings.Contains(reqs[0].UserText, "RALPH-TASK: write hello.txt") {
		t.Errorf("user text = %.500q", reqs[0].UserText)
	}
	return Wrote[S]{Result: res, Events: ev, Server: srv, Target: target}
}

// Wrote is what WritesFile ran.
type Wrote[S Server] struct {
	Result agent.Result
	Events *Events
	Server S
	// Target is the absolute path of hello.txt.
	Target string
}

// RateLimited runs the backend newAgent builds from cfg in a fresh git
// repository and checks that the run fails with an agent.RateLimitError
// whose message contains message, and emits one rate-limit event. It
// returns the error for the checks specific to the CLI.
func RateLimited(t *testing.T, newAgent func(agent.Config) agent.Agent, cfg agent.Config, message string) *agent.RateLimitError {
	t.Helper()
	_, ev, err := RunReal(t, newAgent, cfg, agent.Request{Dir: testutil.GitRepo(t), Prompt: "do it"})
	rl := WantRateLimit(t, err, message)
	t.Logf("rate limit: %v", rl)
	if len(ev.Of(agent.KindRateLimit)) != 1 {
		t.Errorf("rate-limit events = %+v", ev.Of(agent.KindRateLimit))
	}
	return rl
}

// WantRateLimit fails the test unless err is an agent.RateLimitError
// whose message contains message, and returns it.
func WantRateLimit(t *testing.T, err error, message string) *agent.RateLimitError {
	t.Helper()
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) || !strings.Contains(rl.Message, message) {
		t.Fatalf("err = %v, want a RateLimitError with %q", err, message)
	}
	return rl
}

// ReadFile returns the content of dir/name, failing the test when it
// cannot be read.
func ReadFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Sandbox returns the sandbox ralph confines agents with by default. It
// fails the test when Landlock is missing and CI is set, skips it
// otherwise: an end-to-end test of a real CLI runs confined or not at all.
func Sandbox(t testing.TB) *sandbox.Settings {
	t.Helper()
	if st := sandbox.Probe(); !st.Available() {
		if os.Getenv("CI") != "" {
			t.Fatalf("the sandbox cannot run here: %s", st.Reason)
		}
		t.Skipf("the sandbox cannot run here: %s", st.Reason)
	}
	return &sandbox.Settings{Mode: sandbox.ModeWorkspace, Network: sandbox.NetworkOpen}
}

// DeniedKey runs the real CLI, confined, in a fresh git repository on a
// scripted session whose shell tool reads the private key in the agent's
// $HOME/.ssh. It checks that the read fails with "Permission denied" as
// the tool's result, that the key's content reaches no event, that a
// sandbox event names the key, and that the run goes on to its final
// message.
func DeniedKey[S Server](t *testing.T, c WriteFile[S]) {
	t.Helper()
	const secret = "NOT-A-REAL-KEY-b6f1"
	srv := c.NewServer(t,
		testutil.Calls("I will read the key.", testutil.Shell("sh", "-c", `cat "$HOME/.ssh/id_ed25519"; sleep 0.3`)),
		testutil.Text(Final),
	)
	cfg := c.Config(t, srv, "")
	home := cliagentHome(cfg)
	key := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, ev, err := RunReal(t, c.NewAgent, cfg, agent.Request{Dir: testutil.GitRepo(t), Prompt: "read the key"})
	if err != nil {
		t.Fatalf("%v\nrequests: %d", err, len(srv.Requests()))
	}
	for _, e := range ev.all {
		if strings.Contains(e.Text, secret) || strings.Contains(string(e.Input), secret) {
			t.Errorf("the key reached an event: %+v", e)
		}
	}
	results := ev.Of(agent.KindToolResult)
	if len(results) != 1 || results[0].Tool != c.ShellTool || !strings.Contains(results[0].Text, "Permission denied") {
		t.Errorf("tool results = %+v, want the shell's Permission denied", results)
	}
	denied := ev.Of(agent.KindSandbox)
	if len(denied) != 1 || !strings.Contains(denied[0].Text, key) {
		t.Errorf("sandbox events = %+v, want one naming %s", denied, key)
	}
	if res.Final != Final {
		t.Errorf("final = %q", res.Final)
	}
}

// cliagentHome is the $HOME cfg gives the agent.
func cliagentHome(cfg agent.Config) string {
	for i := len(cfg.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(cfg.Env[i], "HOME="); ok {
			return v
		}
	}
	h, _ := os.UserHomeDir()
	return h
}

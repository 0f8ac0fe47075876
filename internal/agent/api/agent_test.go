package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// fake is a fake model server of either provider.
type fake interface {
	Requests() []testutil.Request
	Scripted() []testutil.Request
	Push(turns ...testutil.Turn)
}

// provider under test: its name, a fake server and a config pointing at it.
type fakeCase struct {
	name string
	new  func(t *testing.T, turns ...testutil.Turn) (fake, Config)
}

var fakes = []fakeCase{
	{Anthropic, func(t *testing.T, turns ...testutil.Turn) (fake, Config) {
		s := testutil.NewAnthropic(t, turns...)
		return s, Config{Provider: Anthropic, BaseURL: s.URL(), APIKey: "sk-ant-fake"}
	}},
	{OpenAI, func(t *testing.T, turns ...testutil.Turn) (fake, Config) {
		s := testutil.NewChat(t, turns...)
		return s, Config{Provider: OpenAI, BaseURL: s.BaseURL(), APIKey: "sk-fake"}
	}},
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTestAgent builds an agent whose backoff is a millisecond.
func newTestAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	a, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	a.c.retry.base = time.Millisecond
	return a
}

// recorder collects events.
type recorder struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (r *recorder) emit(ev agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recorder) of(k agent.Kind) []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Event
	for _, ev := range r.evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func (r *recorder) texts(k agent.Kind) string {
	var s []string
	for _, ev := range r.of(k) {
		s = append(s, ev.Text)
	}
	return strings.Join(s, "\n")
}

func run(t *testing.T, a *Agent, dir string) (agent.Result, *recorder, error) {
	t.Helper()
	rec := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.Run(ctx, agent.Request{Dir: dir, System: "SYSTEM: you are ralph's test agent.", Prompt: "TASK: copy hello.txt", Iteration: 1}, rec.emit)
	return res, rec, err
}

// The agent completes a multi-turn task against each fake: it writes a
// file, runs a command, reads the result back and ends with text.
func TestRunMultiTurn(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t,
				testutil.Calls("I'll write the file.", testutil.WriteFile("hello.txt", "hello world\n")),
				testutil.Calls("", testutil.RawCall("run", map[string]any{"argv": []string{"cp", "hello.txt", "copy.txt"}})),
				testutil.Calls("Checking.", testutil.RawCall("read_file", map[string]any{"path": "copy.txt"})),
				testutil.Text("Copied. <promise>COMPLETE</promise>"),
			)
			dir := t.TempDir()
			res, rec, err := run(t, newTestAgent(t, cfg), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Final != "Copied. <promise>COMPLETE</promise>" || res.ToolCalls != 3 {
				t.Errorf("result = %+v", res)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "copy.txt")); err != nil || string(b) != "hello world\n" {
				t.Errorf("copy.txt = %q, %v", b, err)
			}

			calls := rec.of(agent.KindToolCall)
			results := rec.of(agent.KindToolResult)
			if len(calls) != 3 || len(results) != 3 {
				t.Fatalf("calls %d results %d", len(calls), len(results))
			}
			wantTools := []string{"write_file", "run", "read_file"}
			for i, c := range calls {
				if c.Tool != wantTools[i] || c.ToolID == "" || results[i].ToolID != c.ToolID || results[i].IsError {
					t.Errorf("call %d = %+v, result %+v", i, c, results[i])
				}
			}
			var in map[string]any
			if err := json.Unmarshal(calls[0].Input, &in); err != nil || in["path"] != "hello.txt" || in["content"] != "hello world\n" {
				t.Errorf("write_file input %s: %v", calls[0].Input, err)
			}
			if !strings.Contains(string(calls[1].Input), `"cp"`) {
				t.Errorf("run input %s", calls[1].Input)
			}
			if !strings.Contains(results[2].Text, "1\thello world") {
				t.Errorf("read_file result %q", results[2].Text)
			}
			if got := rec.texts(agent.KindText); got != "I'll write the file.\nChecking.\nCopied. <promise>COMPLETE</promise>" {
				t.Errorf("texts = %q", got)
			}
			usage := rec.of(agent.KindUsage)
			if len(usage) != 4 || usage[0].Usage.InputTokens != 100 || usage[0].Usage.OutputTokens != 20 {
				t.Errorf("usage events = %+v", usage)
			}
			if res.Usage.InputTokens != 400 || res.Usage.OutputTokens != 80 || res.Usage.CostUSD <= 0 {
				t.Errorf("usage = %+v", res.Usage)
			}

			reqs := s.Scripted()
			if len(reqs) != 4 {
				t.Fatalf("%d scripted requests", len(reqs))
			}
			for i, r := range reqs {
				if r.System != "SYSTEM: you are ralph's test agent." {
					t.Errorf("request %d system = %q", i, r.System)
				}
				if strings.Contains(r.UserText, "SYSTEM:") || !strings.Contains(r.UserText, "TASK: copy hello.txt") {
					t.Errorf("request %d user text = %q", i, r.UserText)
				}
				if !r.Stream {
					t.Errorf("request %d not streamed", i)
				}
				if len(r.Tools) != len(toolDefs) {
					t.Errorf("request %d offers %d tools", i, len(r.Tools))
				}
			}
			// The read_file result went back to the model.
			if !strings.Contains(string(reqs[3].Body), `hello world`) {
				t.Errorf("last request lacks the tool result: %s", reqs[3].Body)
			}
		})
	}
}

// The system prompt is the API's system field (Anthropic) or a system
// message (OpenAI), never user text.
func TestSystemPromptPlacement(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t, testutil.Text("done"))
			if _, _, err := run(t, newTestAgent(t, cfg), t.TempDir()); err != nil {
				t.Fatal(err)
			}
			var body struct {
				System   any `json:"system"`
				Messages []struct {
					Role    string `json:"role"`
					Content any    `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(s.Scripted()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			sys, _ := json.Marshal(body.System)
			switch fc.name {
			case Anthropic:
				if !strings.Contains(string(sys), "SYSTEM: you are") {
					t.Errorf("system field = %s", sys)
				}
				if len(body.Messages) != 1 || body.Messages[0].Role != "user" {
					t.Errorf("messages = %+v", body.Messages)
				}
			case OpenAI:
				if len(body.Messages) != 2 || body.Messages[0].Role != "system" || body.Messages[1].Role != "user" {
					t.Errorf("messages = %+v", body.Messages)
				}
			}
			for _, m := range body.Messages {
				c, _ := json.Marshal(m.Content)
				if m.Role == "user" && strings.Contains(string(c), "SYSTEM:") {
					t.Errorf("system prompt in user message: %s", c)
				}
			}
		})
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t, testutil.Turn{Status: 429, RetryAfter: "1", Message: "rate limited"}, testutil.Text("done"))
			start := time.Now()
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Final != "done" {
				t.Errorf("final = %q", res.Final)
			}
			if d := time.Since(start); d < 900*time.Millisecond {
				t.Errorf("retried after %s, want the 1s retry-after", d)
			}
			rl := rec.of(agent.KindRateLimit)
			if len(rl) != 1 || !strings.Contains(rl[0].Text, "rate limited") || !strings.Contains(rl[0].Text, "retrying in 1s") || rl[0].ResetAt.IsZero() {
				t.Errorf("rate-limit events = %+v", rl)
			}
			if n := len(s.Scripted()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

func TestOverloadedBackoff(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t, testutil.Turn{Status: 529}, testutil.Turn{Status: 529}, testutil.Text("done"))
			a := newTestAgent(t, cfg)
			a.c.retry.base = 20 * time.Millisecond
			start := time.Now()
			res, rec, err := run(t, a, t.TempDir())
			if err != nil || res.Final != "done" {
				t.Fatalf("res %+v err %v", res, err)
			}
			if d := time.Since(start); d < 60*time.Millisecond {
				t.Errorf("took %s, want 20ms + 40ms of backoff", d)
			}
			rl := rec.of(agent.KindRateLimit)
			if len(rl) != 2 || !strings.Contains(rl[0].Text, "overloaded (HTTP 529)") || !strings.Contains(rl[1].Text, "retry 2 of 3") {
				t.Errorf("events = %+v", rl)
			}
			if n := len(s.Scripted()); n != 3 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t, testutil.Turn{Status: 429, Message: "slow down", Repeat: -1})
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			var rl *agent.RateLimitError
			if !errors.As(err, &rl) || rl.ResetAt.IsZero() || !strings.Contains(rl.Message, "after 3 retries") {
				t.Fatalf("err = %v", err)
			}
			if n := len(s.Scripted()); n != 4 {
				t.Errorf("%d requests, want 1 + 3 retries", n)
			}
			if n := len(rec.of(agent.KindRateLimit)); n != 3 {
				t.Errorf("%d rate-limit events", n)
			}
			if res.ToolCalls != 0 {
				t.Errorf("res = %+v", res)
			}
		})
	}
}

// The retry budget is the iteration's, not each request's.
func TestRetryBudgetPerIteration(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			busy := testutil.Turn{Status: 529}
			s, cfg := fc.new(t, busy, testutil.Calls("", testutil.RawCall("list_files", map[string]any{})), busy, busy, busy, testutil.Text("never"))
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			var rl *agent.RateLimitError
			if !errors.As(err, &rl) {
				t.Fatalf("err = %v", err)
			}
			if res.ToolCalls != 1 || len(s.Scripted()) != 5 || len(rec.of(agent.KindRateLimit)) != 3 {
				t.Errorf("res %+v, %d requests, events %+v", res, len(s.Scripted()), rec.of(agent.KindRateLimit))
			}
		})
	}
}

// A retry-after longer than an iteration should wait goes to the engine
// at once, with its reset time.
func TestLongRetryAfterGoesToEngine(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t, testutil.RateLimited("3600", "quota"))
			_, _, err := run(t, newTestAgent(t, cfg), t.TempDir())
			var rl *agent.RateLimitError
			if !errors.As(err, &rl) {
				t.Fatalf("err = %v", err)
			}
			if d := time.Until(rl.ResetAt); d < 59*time.Minute || d > 61*time.Minute {
				t.Errorf("reset in %s", d)
			}
			if n := len(s.Scripted()); n != 1 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

func TestServerErrorsAndFatal(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t, testutil.Turn{Status: 500, Repeat: -1})
			_, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			var rl *agent.RateLimitError
			if err == nil || errors.As(err, &rl) || !strings.Contains(err.Error(), "after 3 retries") {
				t.Fatalf("500s: err = %v", err)
			}
			if n := len(rec.of(agent.KindInfo)); n != 4 { // the model line and three retries
				t.Errorf("%d info events: %+v", n, rec.of(agent.KindInfo))
			}
			if n := len(s.Scripted()); n != 4 {
				t.Errorf("%d requests", n)
			}

			s3, cfg3 := fc.new(t, testutil.Turn{Status: 429, Message: "You exceeded your current quota", Code: "insufficient_quota"})
			_, _, err = run(t, newTestAgent(t, cfg3), t.TempDir())
			if fc.name == OpenAI && (errors.As(err, &rl) || len(s3.Scripted()) != 1) {
				t.Errorf("insufficient_quota retried: %v after %d requests", err, len(s3.Scripted()))
			}

			s2, cfg2 := fc.new(t, testutil.Turn{Status: 401, Message: "invalid x-api-key"})
			_, _, err = run(t, newTestAgent(t, cfg2), t.TempDir())
			if err == nil || errors.As(err, &rl) || !strings.Contains(err.Error(), "401") {
				t.Fatalf("401: err = %v", err)
			}
			if n := len(s2.Scripted()); n != 1 {
				t.Errorf("401 retried: %d requests", n)
			}
		})
	}
}

// A mid-stream failure (Anthropic's error event, an error object in an
// OpenAI stream) is retried like an overload.
func TestStreamFailureRetried(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			_, cfg := fc.new(t, testutil.Turn{Failed: true, Message: "Overloaded"}, testutil.Text("done"))
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			if err != nil || res.Final != "done" {
				t.Fatalf("res %+v err %v", res, err)
			}
			if n := len(rec.of(agent.KindRateLimit)) + len(rec.of(agent.KindInfo)); n != 2 {
				t.Errorf("events = %+v", rec.evs)
			}
		})
	}
}

func contextTurn(provider string) testutil.Turn {
	if provider == OpenAI {
		return testutil.ContextExceeded()
	}
	return testutil.Turn{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}
}

// A prompt over the context window has its oldest tool results trimmed
// and is sent again.
func TestContextWindowTrim(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t,
				testutil.Calls("", testutil.RawCall("run", map[string]any{"argv": []string{"echo", "FIRST-RESULT", strings.Repeat("x", 100)}})),
				testutil.Calls("", testutil.RawCall("run", map[string]any{"argv": []string{"echo", "SECOND-RESULT", strings.Repeat("y", 100)}})),
				contextTurn(fc.name),
				testutil.Text("done"),
			)
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			if err != nil || res.Final != "done" {
				t.Fatalf("res %+v err %v", res, err)
			}
			if !strings.Contains(rec.texts(agent.KindInfo), "trimmed the 1 oldest tool results") {
				t.Errorf("info = %q", rec.texts(agent.KindInfo))
			}
			reqs := s.Scripted()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			before, after := string(reqs[2].Body), string(reqs[3].Body)
			if !strings.Contains(before, "FIRST-RESULT xxx") || strings.Contains(before, trimmedNote) {
				t.Errorf("request before trimming: %s", before)
			}
			if strings.Contains(after, "FIRST-RESULT xxx") || !strings.Contains(after, trimmedNote) || !strings.Contains(after, "SECOND-RESULT") {
				t.Errorf("request after trimming: %s", after)
			}
		})
	}
}

func TestContextWindowNothingToTrim(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			_, cfg := fc.new(t, contextTurn(fc.name))
			_, _, err := run(t, newTestAgent(t, cfg), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), "context window") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestTurnCap(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			ls := testutil.RawCall("list_files", map[string]any{})
			s, cfg := fc.new(t, testutil.Calls("one", ls), testutil.Calls("two", ls), testutil.Calls("three", ls))
			cfg.MaxTurns = 2
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.ToolCalls != 2 || res.Final != "two" {
				t.Errorf("res = %+v", res)
			}
			if !strings.Contains(rec.texts(agent.KindError), "stopped after 2 model turns") {
				t.Errorf("errors = %q", rec.texts(agent.KindError))
			}
			if n := len(s.Scripted()); n != 2 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

func TestToolCallCap(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			w := func(p string) testutil.Call { return testutil.WriteFile(p, "x") }
			s, cfg := fc.new(t, testutil.Calls("", w("a"), w("b"), w("c")), testutil.Text("never"))
			cfg.MaxToolCalls = 2
			dir := t.TempDir()
			res, rec, err := run(t, newTestAgent(t, cfg), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.ToolCalls != 2 || len(rec.of(agent.KindToolCall)) != 2 {
				t.Errorf("res = %+v", res)
			}
			if _, err := os.Stat(filepath.Join(dir, "c")); err == nil {
				t.Error("the call over the cap ran")
			}
			if !strings.Contains(rec.texts(agent.KindError), "stopped after 2 tool calls") {
				t.Errorf("errors = %q", rec.texts(agent.KindError))
			}
			if n := len(s.Scripted()); n != 1 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

// A failing tool is an error result the model reads; the run goes on.
func TestToolErrorGoesToModel(t *testing.T) {
	for _, fc := range fakes {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := fc.new(t,
				testutil.Calls("", testutil.RawCall("read_file", map[string]any{"path": "../../etc/passwd"}),
					testutil.RawCall("no_such_tool", map[string]any{})),
				testutil.Text("done"))
			res, rec, err := run(t, newTestAgent(t, cfg), t.TempDir())
			if err != nil || res.Final != "done" {
				t.Fatalf("res %+v err %v", res, err)
			}
			results := rec.of(agent.KindToolResult)
			if len(results) != 2 || !results[0].IsError || !results[1].IsError ||
				!strings.Contains(results[0].Text, "leaves the workspace") || !strings.Contains(results[1].Text, `unknown tool "no_such_tool"`) {
				t.Errorf("results = %+v", results)
			}
			body := string(s.Scripted()[1].Body)
			if !strings.Contains(body, "leaves the workspace") {
				t.Errorf("error not sent back: %s", body)
			}
			if fc.name == Anthropic && !strings.Contains(body, `"is_error":true`) {
				t.Errorf("no is_error: %s", body)
			}
		})
	}
}

// A command the model runs through the agent cannot print the key the
// agent talks to the model with, nor the other provider's.
func TestRunToolHidesAPIKey(t *testing.T) {
	t.Setenv("RALPH_TEST_MODEL_KEY", "sk-ant-model-secret")
	t.Setenv(EnvAnthropicKey, "sk-ant-env-secret")
	t.Setenv(EnvOpenAIKey, "sk-openai-env-secret")
	s := testutil.NewAnthropic(t,
		testutil.Calls("", testutil.RawCall("run", map[string]any{"argv": []string{"env"}})),
		testutil.Text("done"))
	a := newTestAgent(t, Config{Provider: Anthropic, BaseURL: s.URL(), APIKeyEnv: "RALPH_TEST_MODEL_KEY"})
	res, rec, err := run(t, a, t.TempDir())
	if err != nil || res.Final != "done" {
		t.Fatalf("res %+v err %v", res, err)
	}
	if got := s.Requests()[0].Header.Get("X-Api-Key"); got != "sk-ant-model-secret" {
		t.Fatalf("the agent used key %q", got)
	}
	out := rec.texts(agent.KindToolResult)
	if !strings.Contains(out, "PATH=") {
		t.Fatalf("env did not run: %s", out)
	}
	for _, secret := range []string{"sk-ant-model-secret", "sk-ant-env-secret", "sk-openai-env-secret"} {
		if strings.Contains(out, secret) || strings.Contains(string(s.Scripted()[1].Body), secret) {
			t.Errorf("%s reached the model's command", secret)
		}
	}
}

// A full turn with ralph's own tools: the model reads a recipe and saves a
// snapshot, and both results reach it in the next request's tool_result
// blocks, in the order it called them.
func TestRalphToolsTurn(t *testing.T) {
	noUserRecipes(t)
	s := testutil.NewAnthropic(t,
		testutil.Calls("Reading the recipe, then saving.",
			testutil.RawCall("recipe_show", map[string]any{"id": "hero"}),
			testutil.RawCall("snapshot_save", map[string]any{"message": "before the hero"})),
		testutil.Text("done"))
	dir := testutil.GitRepo(t)
	write(t, dir, "index.html", "<h1>hi</h1>\n")
	res, rec, err := run(t, newTestAgent(t, Config{Provider: Anthropic, BaseURL: s.URL(), APIKey: "sk-ant-fake"}), dir)
	if err != nil || res.Final != "done" || res.ToolCalls != 2 {
		t.Fatalf("res %+v err %v", res, err)
	}

	reqs := s.Scripted()
	if len(reqs) != 2 {
		t.Fatalf("%d scripted requests, want 2", len(reqs))
	}
	offered := map[string]map[string]any{}
	for _, tool := range reqs[0].Tools {
		offered[tool.Name] = tool.Schema
	}
	for _, name := range []string{"theme_modify", "theme_list", "recipe_show", "recipe_list", "snapshot_save", "snapshot_list", "snapshot_diff"} {
		if offered[name] == nil || offered[name]["type"] != "object" {
			t.Errorf("tool %s not offered with a schema: %v", name, offered[name])
		}
	}

	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	if last.Role != "user" || len(last.Content) != 2 {
		t.Fatalf("last message: %+v", last)
	}
	var texts []string
	for _, b := range last.Content {
		if b.Type != "tool_result" || b.IsError || b.ToolUseID == "" || len(b.Content) != 1 {
			t.Fatalf("block %+v", b)
		}
		texts = append(texts, b.Content[0].Text)
	}
	if !strings.HasPrefix(texts[0], "# Hero (hero)") || !strings.Contains(texts[0], "category:       marketing") {
		t.Errorf("recipe_show result: %q", texts[0])
	}
	m := savedRE.FindStringSubmatch(texts[1])
	if m == nil {
		t.Fatalf("snapshot_save result: %q", texts[1])
	}
	if ev := rec.of(agent.KindToolResult); len(ev) != 2 || ev[1].Text != texts[1] {
		t.Errorf("events %+v", ev)
	}

	// The snapshot the model took holds the workspace.
	repo, err := snapshot.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := repo.ReadFile(context.Background(), m[1], "index.html")
	if err != nil || string(data) != "<h1>hi</h1>\n" {
		t.Errorf("snapshot %s index.html = %q, %v", m[1], data, err)
	}
	snap, err := repo.Resolve(context.Background(), m[1])
	if err != nil || !strings.Contains(snap.Message, "before the hero") {
		t.Errorf("snapshot %+v, %v", snap, err)
	}
}

// A stream that goes quiet for the idle timeout ends the iteration with
// proc.ErrIdle, as the engine expects.
func TestIdleStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	a := newTestAgent(t, Config{Provider: Anthropic, BaseURL: srv.URL, APIKey: "k"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := a.Run(ctx, agent.Request{Dir: t.TempDir(), Prompt: "hi", IdleTimeout: 200 * time.Millisecond}, func(agent.Event) {})
	if !errors.Is(err, proc.ErrIdle) || !errors.Is(err, agent.ErrIdle) {
		t.Fatalf("err = %v", err)
	}
}

func TestCanceled(t *testing.T) {
	_, cfg := fakes[0].new(t, testutil.Calls("", testutil.RawCall("run", map[string]any{"argv": []string{"sleep", "30"}})))
	a := newTestAgent(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := a.Run(ctx, agent.Request{Dir: t.TempDir(), Prompt: "hi"}, func(agent.Event) {})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to stop", d)
	}
}

func TestNameAndDefaults(t *testing.T) {
	a := newTestAgent(t, Config{Provider: OpenAI, APIKey: "k", BaseURL: "http://127.0.0.1:1/v1"})
	if a.Name() != "api" || a.Provider() != OpenAI || a.Model() != DefaultOpenAIModel {
		t.Errorf("%s %s %s", a.Name(), a.Provider(), a.Model())
	}
}

func TestConfigResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name    string
		cfg     Config
		env     func(string) string
		want    Config
		wantErr string
	}{
		{"anthropic from env", Config{}, env(EnvAnthropicKey, "a-key", EnvAnthropicBase, "http://a", EnvOpenAIKey, "o-key"),
			Config{Provider: Anthropic, APIKey: "a-key", BaseURL: "http://a", Model: DefaultAnthropicModel}, ""},
		{"openai from env", Config{}, env(EnvOpenAIKey, "o-key", EnvOpenAIBase, "http://o/v1"),
			Config{Provider: OpenAI, APIKey: "o-key", BaseURL: "http://o/v1", Model: DefaultOpenAIModel}, ""},
		{"key form", Config{APIKey: "sk-ant-x"}, env(), Config{Provider: Anthropic, APIKey: "sk-ant-x", Model: DefaultAnthropicModel}, ""},
		{"other key is openai-compatible", Config{APIKey: "x", Model: "llama"}, env(EnvAnthropicKey, "a"), Config{Provider: OpenAI, APIKey: "x", Model: "llama"}, ""},
		{"key env var", Config{Provider: "OpenAI", APIKeyEnv: "GROQ_KEY", BaseURL: "http://g/v1"}, env("GROQ_KEY", "g"),
			Config{Provider: OpenAI, APIKey: "g", BaseURL: "http://g/v1", Model: DefaultOpenAIModel}, ""},
		{"key env var unset", Config{APIKeyEnv: "GROQ_KEY"}, env(), Config{}, "GROQ_KEY is not set"},
		{"no key", Config{}, env(), Config{}, "no API key"},
		{"provider without key", Config{Provider: Anthropic}, env(EnvOpenAIKey, "o"), Config{}, "set ANTHROPIC_API_KEY"},
		{"unknown provider", Config{Provider: "gemini", APIKey: "k"}, env(), Config{}, `unknown provider "gemini"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.resolve(tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Provider != tt.want.Provider || got.APIKey != tt.want.APIKey || got.BaseURL != tt.want.BaseURL || got.Model != tt.want.Model {
				t.Errorf("got %+v", got)
			}
			if got.MaxTurns != DefaultMaxTurns || got.MaxToolCalls != DefaultMaxToolCalls || got.MaxTokens != DefaultMaxTokens ||
				got.RunTimeout != DefaultRunTimeout || got.MaxRetries != DefaultMaxRetries {
				t.Errorf("defaults = %+v", got)
			}
		})
	}
	if _, err := New(Config{Provider: "nope", APIKey: "k"}, nil); err == nil {
		t.Error("New accepted an unknown provider")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"12":                            12 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"":                              0,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:05:05 GMT": time.Minute,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
	h := http.Header{}
	h.Set("retry-after-ms", "1500")
	h.Set("retry-after", "9")
	if got := retryAfterFrom(h, now); got != 1500*time.Millisecond {
		t.Errorf("retry-after-ms: %s", got)
	}
}

func TestCost(t *testing.T) {
	u := agent.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}
	for model, want := range map[string]float64{
		"claude-sonnet-4-6":          3 + 15 + 0.3 + 3.75,
		"claude-sonnet-4-5-20250929": 3 + 15 + 0.3 + 3.75,
		"claude-haiku-4-5":           1 + 5 + 0.1 + 1.25,
		"gpt-4.1":                    2 + 8 + 0.5,
		"gpt-4.1-mini":               0.4 + 1.6 + 0.1,
		"gpt-4o-mini-2024-07-18":     0.15 + 0.6 + 0.075,
		"gpt-4.10":                   0,
		"llama3":                     0,
	} {
		if got := cost(model, u); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("cost(%s) = %v, want %v", model, got, want)
		}
	}
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/testutil"
)

func newTestModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	m, err := NewModel(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	mm := m.(*Model)
	mm.c.retry.base = time.Millisecond
	return mm
}

func TestModelAnthropic(t *testing.T) {
	s := testutil.NewAnthropic(t)
	m := newTestModel(t, Config{Provider: Anthropic, BaseURL: s.URL(), APIKey: "sk-ant-fake", Model: "claude-haiku-4-5"})
	out, err := m.Complete(context.Background(), "You parse tasks.", "Add a footer")
	if err != nil || out != "ok" { // the fake's answer to a request without tools
		t.Fatalf("Complete = %q, %v", out, err)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].System != "You parse tasks." || reqs[0].UserText != "Add a footer" || len(reqs[0].Tools) != 0 || reqs[0].Model != "claude-haiku-4-5" {
		t.Errorf("request = %+v", reqs)
	}
}

func TestModelOpenAI(t *testing.T) {
	s := testutil.NewChat(t, testutil.Text(`{"title": "Add a footer", "type": "fresh"}`))
	s.AnswerAll = true
	m := newTestModel(t, Config{Provider: OpenAI, BaseURL: s.BaseURL(), APIKey: "sk-fake"})
	out, err := m.Complete(context.Background(), "You parse tasks.", "Add a footer")
	if err != nil || !strings.Contains(out, `"Add a footer"`) {
		t.Fatalf("Complete = %q, %v", out, err)
	}
	r := s.Requests()[0]
	if r.System != "You parse tasks." || r.UserText != "Add a footer" || len(r.Tools) != 0 {
		t.Errorf("request = %+v", r)
	}
	var body map[string]any
	_ = json.Unmarshal(r.Body, &body)
	if _, ok := body["tools"]; ok {
		t.Errorf("tools offered to a one-shot completion: %s", r.Body)
	}
}

// The model drives the task parser's Option A end to end.
func TestModelDrivesTaskParser(t *testing.T) {
	answer := `{"title": "Add a footer", "type": "fresh", "requirements": [{"marker": "ADD", "text": "a footer with links"}], "preserve": [], "affected_files": [], "question": ""}`
	s := testutil.NewChat(t, testutil.Text("Here it is:\n"+answer))
	s.AnswerAll = true
	m := newTestModel(t, Config{Provider: OpenAI, BaseURL: s.BaseURL(), APIKey: "sk-fake"})
	p := &task.Parser{Model: m, Logger: testLogger(t)}
	tk, opt, err := p.Parse(context.Background(), task.Input{Message: "add a footer", Counter: 1})
	if err != nil {
		t.Fatal(err)
	}
	if opt.Method != task.OptionA || tk.Title != "Add a footer" || len(tk.Requirements) != 1 {
		t.Errorf("option %s, task = %+v", opt, tk)
	}
}

func TestModelErrors(t *testing.T) {
	if _, err := NewModel(Config{Provider: "bard", APIKey: "k"}, nil); err == nil {
		t.Error("unknown provider accepted")
	}
	if _, err := NewModel(Config{APIKeyEnv: "RALPH_TEST_NO_SUCH_VAR"}, nil); err == nil {
		t.Error("missing key accepted")
	}

	chat := func(turns ...testutil.Turn) (*testutil.ChatServer, *Model) {
		s := testutil.NewChat(t, turns...)
		s.AnswerAll = true
		return s, newTestModel(t, Config{Provider: OpenAI, BaseURL: s.BaseURL(), APIKey: "sk-fake"})
	}
	ctx := context.Background()

	// A rate limit is retried, then reported as one.
	s, m := chat(testutil.Turn{Status: 429, Repeat: -1})
	_, err := m.Complete(ctx, "s", "u")
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) || len(s.Requests()) != 4 {
		t.Errorf("429: %v after %d requests", err, len(s.Requests()))
	}
	// A rate limit that lifts.
	_, m = chat(testutil.Turn{Status: 429}, testutil.Text("fine"))
	if out, err := m.Complete(ctx, "s", "u"); err != nil || out != "fine" {
		t.Errorf("429 then ok: %q, %v", out, err)
	}
	// Authentication fails at once.
	s, m = chat(testutil.Turn{Status: 401, Message: "Incorrect API key provided"})
	if _, err := m.Complete(ctx, "s", "u"); err == nil || !strings.Contains(err.Error(), "Incorrect API key") || len(s.Requests()) != 1 {
		t.Errorf("401: %v", err)
	}
	// There is nothing to trim in a one-shot prompt.
	_, m = chat(testutil.ContextExceeded())
	if _, err := m.Complete(ctx, "s", "u"); err == nil || !strings.Contains(err.Error(), "context window") {
		t.Errorf("context: %v", err)
	}
	// An empty answer is an error.
	_, m = chat(testutil.Turn{})
	if _, err := m.Complete(ctx, "s", "u"); err == nil || !strings.Contains(err.Error(), "empty answer") {
		t.Errorf("empty: %v", err)
	}
	// A wait past the caller's deadline is not waited out.
	s, m = chat(testutil.Turn{Status: 529, Repeat: -1})
	m.c.retry.base = 10 * time.Second
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := m.Complete(dctx, "s", "u"); !errors.As(err, &rl) || time.Since(start) > time.Second || len(s.Requests()) != 1 {
		t.Errorf("deadline: %v after %s", err, time.Since(start))
	}
	// No server.
	dead := newTestModel(t, Config{Provider: Anthropic, BaseURL: "http://127.0.0.1:1", APIKey: "k", MaxRetries: -1})
	if _, err := dead.Complete(ctx, "s", "u"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("no server: %v", err)
	}
}

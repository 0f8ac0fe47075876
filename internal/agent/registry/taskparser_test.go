package registry

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent/script"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/task"
)

// Which way task.md gets written: the api model when one is configured,
// else the run's own agent in one answer, else the template.
func TestTaskParser(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	answering, err := script.Parse([]byte(`{"answer": {"type": "bugfix", "title": "t", "requirements": []}, "iterations": [{"final": "x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	silent, err := script.Parse([]byte(`{"iterations": [{"final": "x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	withAPI := config.Default()
	withAPI.Agents = map[string]config.Backend{"api": {Provider: "anthropic", BaseURL: "http://127.0.0.1:1", APIKeyEnv: "RALPH_TEST_TASKPARSER_KEY"}}
	t.Setenv("RALPH_TEST_TASKPARSER_KEY", "sk-test")
	template := config.Default()
	template.Task.Parser = "template"

	for _, tc := range []struct {
		name    string
		cfg     config.Config
		agent   *script.Agent
		by      string
		timeout time.Duration
	}{
		{"agent answers", config.Default(), script.New(answering), "script, in one answer", AnswerTimeout},
		{"agent has no answer", config.Default(), script.New(silent), "", 0},
		{"template asked for", template, script.New(answering), "", 0},
		{"api configured", withAPI, script.New(answering), "the api model", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := TaskParser(tc.cfg, tc.agent, logger)
			if p.By != tc.by || p.Timeout != tc.timeout || (p.Model == nil) != (tc.by == "") {
				t.Errorf("parser by %q, timeout %s, model %v; want by %q, timeout %s", p.By, p.Timeout, p.Model != nil, tc.by, tc.timeout)
			}
		})
	}

	p := TaskParser(config.Default(), script.New(answering), logger)
	got, opt, err := p.Parse(context.Background(), task.Input{Message: "fix it", Counter: 1})
	if err != nil || got.Type != task.Bugfix || opt.String() != "split into requirements by script, in one answer" {
		t.Errorf("Parse = %v, %q, %v", got.Type, opt, err)
	}
}

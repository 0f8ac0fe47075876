package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
)

func TestCommandAgent(t *testing.T) {
	dir := t.TempDir()
	a := New([]string{"sh", "-c", `cat > got-prompt.txt; cp "$RALPH_SYSTEM_PROMPT_FILE" got-system.txt; echo "iteration $RALPH_ITERATION"; echo '<promise>COMPLETE</promise>'`}, nil, filepath.Join(dir, ".ralph", "logs"))
	var texts []string
	res, err := a.Run(context.Background(), agent.Request{Dir: dir, System: "SYS", Prompt: "USER", Iteration: 4},
		func(e agent.Event) { texts = append(texts, e.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Final != "iteration 4\n<promise>COMPLETE</promise>" {
		t.Errorf("final = %q", res.Final)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "got-prompt.txt")); string(got) != "USER" {
		t.Errorf("stdin = %q, want the user prompt only", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "got-system.txt")); string(got) != "SYS" {
		t.Errorf("system prompt file = %q", got)
	}
	if res.ToolCalls != 0 || len(texts) != 2 {
		t.Errorf("tool calls %d, texts %q", res.ToolCalls, texts)
	}
}

func TestCommandAgentMissingBinary(t *testing.T) {
	a := New([]string{"ralph-no-such-agent"}, nil, t.TempDir())
	_, err := a.Run(context.Background(), agent.Request{Dir: t.TempDir()}, func(agent.Event) {})
	if !errors.Is(err, agent.ErrNotFound) || !strings.Contains(err.Error(), "ralph-no-such-agent") {
		t.Fatalf("err = %v", err)
	}
}

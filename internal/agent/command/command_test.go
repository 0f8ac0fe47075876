package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A command that exits non-zero has failed: Run returns an error naming
// the status and what it said, so the harness counts an agent error
// rather than an agent that finished without calling a tool.
func TestCommandAgentCrashIsAnError(t *testing.T) {
	a := New([]string{"sh", "-c", "echo working; echo 'segfault in model' >&2; exit 3"}, nil, t.TempDir())
	res, err := a.Run(context.Background(), agent.Request{Dir: t.TempDir()}, func(agent.Event) {})
	if err == nil || !strings.Contains(err.Error(), "sh exited with status 3: segfault in model") {
		t.Fatalf("err = %v", err)
	}
	if res.Final != "working" {
		t.Errorf("final = %q", res.Final)
	}
}

// Calls that run at once each read their own system prompt: parallel
// specs give each role its own.
func TestCommandAgentSystemPromptPerCall(t *testing.T) {
	dir := t.TempDir()
	scratch := filepath.Join(dir, "logs")
	a := New([]string{"sh", "-c", `sleep 0.2; cat "$RALPH_SYSTEM_PROMPT_FILE"`}, nil, scratch)
	roles := []string{"planner", "implementer", "verifier"}
	got := make([]string, len(roles))
	errs := make(chan error, len(roles))
	for i, role := range roles {
		go func() {
			res, err := a.Run(context.Background(), agent.Request{Dir: dir, System: "you are the " + role}, func(agent.Event) {})
			got[i] = res.Final
			errs <- err
		}()
	}
	for range roles {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, role := range roles {
		if got[i] != "you are the "+role {
			t.Errorf("the %s read %q", role, got[i])
		}
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("prompt files left behind: %d", len(left))
	}
}

// What the agent detaches (setsid, output closed) ends with its turn, and
// the agent's events say so: it cannot go on writing after the harness has
// checked the tree.
func TestCommandAgentEndsWhatItDetached(t *testing.T) {
	dir := t.TempDir()
	a := New([]string{"sh", "-c", `setsid sh -c 'while :; do date > late.txt; sleep 0.02; done' </dev/null >/dev/null 2>&1 & sleep 0.2; echo done`}, nil, filepath.Join(dir, ".ralph", "logs"))
	var infos []string
	if _, err := a.Run(context.Background(), agent.Request{Dir: dir}, func(e agent.Event) {
		if e.Kind == agent.KindInfo {
			infos = append(infos, e.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || !strings.Contains(infos[0], "left the agent's process group") {
		t.Errorf("info events = %q, want one naming the ended processes", infos)
	}
	os.Remove(filepath.Join(dir, "late.txt"))
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Error("the detached writer still runs after the agent's turn")
	}
}

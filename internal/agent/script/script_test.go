package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
)

func TestParseRefusesBadScripts(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"escape", `{"iterations":[{"actions":[{"tool":"write","path":"../x","content":"y"}]}]}`, "outside the workspace"},
		{"absolute", `{"iterations":[{"actions":[{"tool":"write","path":"/etc/passwd","content":"y"}]}]}`, "outside the workspace"},
		{"unknown tool", `{"iterations":[{"actions":[{"tool":"rm"}]}]}`, `unknown tool "rm"`},
		{"empty", `{"iterations":[]}`, "no iterations"},
		{"garbage", `not json`, "parse script"},
		{"unknown field", `{"iterations":[{"actions":[],"finale":"x"}]}`, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRunPerformsActionsAndRepeatsLastEntry(t *testing.T) {
	dir := t.TempDir()
	s, err := Parse([]byte(`{"iterations":[
		{"actions":[{"tool":"write","path":"a/b.txt","content":"one"},{"tool":"append","path":"a/b.txt","content":"+two"}],"final":"first"},
		{"actions":[{"tool":"delete","path":"a/b.txt"},{"tool":"shell","argv":["sh","-c","echo hi > c.txt"]}],"final":"done <promise>COMPLETE</promise>"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := New(s)
	var events []agent.Event
	emit := func(e agent.Event) { events = append(events, e) }
	res, err := a.Run(context.Background(), agent.Request{Dir: dir, Iteration: 1}, emit)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a/b.txt")); string(got) != "one+two" {
		t.Errorf("a/b.txt = %q", got)
	}
	if res.ToolCalls != 2 || res.Final != "first" {
		t.Errorf("result = %+v", res)
	}
	if events[0].Kind != agent.KindToolCall || events[0].Tool != "write" || !strings.Contains(string(events[0].Input), `"path":"a/b.txt"`) {
		t.Errorf("first event = %+v", events[0])
	}
	for _, n := range []int{2, 3} { // the last entry repeats
		if _, err := a.Run(context.Background(), agent.Request{Dir: dir, Iteration: n}, emit); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a/b.txt")); !os.IsNotExist(err) {
		t.Error("delete did not delete")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "c.txt")); string(got) != "hi\n" {
		t.Errorf("shell output file = %q", got)
	}
}

func TestRunRefusesSymlinkOutOfWorkspace(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	s, _ := Parse([]byte(`{"iterations":[{"actions":[{"tool":"write","path":"link/x.txt","content":"y"}]}]}`))
	var events []agent.Event
	if _, err := New(s).Run(context.Background(), agent.Request{Dir: dir, Iteration: 1}, func(e agent.Event) { events = append(events, e) }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Fatal("the script wrote through a symlink out of the workspace")
	}
	if !events[1].IsError || !strings.Contains(events[1].Text, "outside the workspace") {
		t.Errorf("tool result = %+v", events[1])
	}
}

func TestPromptActionWritesThePrompt(t *testing.T) {
	dir := t.TempDir()
	s, err := Parse([]byte(`{"iterations":[{"actions":[{"tool":"prompt","path":"seen/prompt.md"}],"final":"ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var events []agent.Event
	if _, err := New(s).Run(context.Background(), agent.Request{Dir: dir, Iteration: 1, Prompt: "the spec"}, func(e agent.Event) { events = append(events, e) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "seen/prompt.md")); string(got) != "the spec" {
		t.Errorf("prompt file = %q", got)
	}
	if events[0].Tool != "prompt" || events[1].IsError {
		t.Errorf("events = %+v", events)
	}
	if _, err := Parse([]byte(`{"iterations":[{"actions":[{"tool":"prompt"}]}]}`)); err == nil {
		t.Error("prompt without a path parsed")
	}
}

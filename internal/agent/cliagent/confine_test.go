package cliagent

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/sandbox"
)

// A confined call's events carry a sandbox event after each tool result
// that reports a refused access outside the workspace, once per path;
// assistant text counts only for a program whose output is its tools'.
func TestConfinementWatch(t *testing.T) {
	ws := t.TempDir()
	c, err := Confine(&sandbox.Settings{Mode: sandbox.ModeWorkspace}, sandbox.Target{Dir: ws, Home: t.TempDir()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	denied := agent.Event{Kind: agent.KindToolResult, Tool: "Bash", Text: "cat: /etc/shadow-x: Permission denied"}
	for _, tt := range []struct {
		name string
		all  bool
		in   []agent.Event
		want int
	}{
		{"tool result", false, []agent.Event{denied}, 1},
		{"the same path again", false, []agent.Event{denied}, 0},
		{"inside the workspace", false, []agent.Event{{Kind: agent.KindToolResult, Text: "cat: " + ws + "/x: Permission denied"}}, 0},
		{"assistant text", false, []agent.Event{{Kind: agent.KindText, Text: "cat: /etc/other: Permission denied"}}, 0},
		{"command output", true, []agent.Event{{Kind: agent.KindText, Text: "cat: /etc/other: Permission denied"}}, 1},
	} {
		var got []agent.Event
		emit := c.Watch(ws, func(e agent.Event) { got = append(got, e) }, tt.all)
		for _, e := range tt.in {
			emit(e)
		}
		var n int
		for _, e := range got[len(tt.in):] {
			if e.Kind != agent.KindSandbox || !strings.Contains(e.Text, "refused access to /etc/") {
				t.Errorf("%s: event %+v", tt.name, e)
			}
			n++
		}
		if n != tt.want {
			t.Errorf("%s: %d sandbox events, want %d", tt.name, n, tt.want)
		}
	}
	var nilConf *Confinement
	if nilConf.Ruleset() != nil || nilConf.Env() != nil {
		t.Error("an unconfined call has a policy")
	}
}

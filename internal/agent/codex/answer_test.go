package codex

import (
	"slices"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
)

// A single answer runs read-only in the directory given, whatever sandbox
// the iterations use.
func TestAnswerArgs(t *testing.T) {
	a := New(agent.Config{Binary: "codex", Sandbox: "danger-full-access", Model: "m"}, nil)
	got := a.AnswerArgs("/tmp/x", "SYSTEM")
	want := []string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "-C", "/tmp/x",
		"-m", "m", "-c", `developer_instructions="SYSTEM"`, "-"}
	if !slices.Equal(got, want) {
		t.Errorf("AnswerArgs = %q\nwant %q", got, want)
	}
}

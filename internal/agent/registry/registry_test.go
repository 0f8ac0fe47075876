package registry

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// A wrong --agent is a usage error that says what is wrong; an agent
// whose program is missing is an agent error, which ends ralph with the
// agent's exit code.
func TestBuildChain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	ws := &workspace.Workspace{Root: dir}
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name   string
		flags  Flags
		reason failure.Reason
		msg    string
	}{
		{"auto in a chain", Flags{Name: "claude,auto"}, failure.Usage, "auto cannot be part of a fallback chain"},
		{"named twice", Flags{Name: "command,command"}, failure.Usage, "command is named twice"},
		{"script without a file", Flags{Name: "script"}, failure.Usage, "--agent script needs --script FILE"},
		{"unknown", Flags{Name: "nope"}, failure.Usage, `unknown agent "nope"`},
		{"missing program", Flags{Name: "command", Command: "no-such-agent --go"}, failure.Reason(engine.AgentError), "no-such-agent is not on PATH"},
		{"missing CLI", Flags{Name: "claude"}, failure.Reason(engine.AgentError), "is not on PATH (install it:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := BuildChain(ws, config.Default(), tc.flags, logger)
			var f *failure.Error
			if !errors.As(err, &f) || f.Reason != tc.reason || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("BuildChain(%+v) = %v, want a %s failure saying %q", tc.flags, err, tc.reason, tc.msg)
			}
			if tc.reason == failure.Reason(engine.AgentError) && !errors.Is(err, agent.ErrNotFound) {
				t.Errorf("err = %v, want agent.ErrNotFound", err)
			}
		})
	}

}

package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCommandGate(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name   string
		gate   Command
		status Status
		msg    string
	}{
		{"pass", Command{GateName: "ok", Argv: []string{"true"}}, Pass, "passed"},
		{"fail shows output", Command{GateName: "t", Argv: []string{"sh", "-c", "echo 'FAIL: TestX'; exit 1"}}, Fail, "FAIL: TestX"},
		{"optional warns", Command{GateName: "lint", Argv: []string{"false"}, Optional: true}, Warn, "status 1"},
		{"missing program", Command{GateName: "x", Argv: []string{"ralph-no-such-gate"}}, Fail, "not found"},
		{"timeout", Command{GateName: "slow", Argv: []string{"sleep", "5"}, Timeout: 100 * time.Millisecond}, Fail, "did not finish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.gate.Check(context.Background(), Env{Root: root})
			if r.Status != tt.status || !strings.Contains(r.Message, tt.msg) {
				t.Fatalf("got %s %q, want %s containing %q", r.Status, r.Message, tt.status, tt.msg)
			}
			if r.Status != Pass && r.Fix == "" && tt.name != "optional warns" {
				t.Error("a failure has no explicit fix")
			}
		})
	}
}

func TestHasSummaryAndFeedback(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".ralph"), 0o755)
	r := HasSummary{}.Check(context.Background(), Env{Root: root})
	if r.Status != Fail {
		t.Fatalf("no summary: %s", r.Status)
	}
	fb := Feedback([]Result{{Gate: "has-summary", Status: Fail, Message: r.Message, Fix: r.Fix}, {Gate: "plan-diff", Status: Warn, Message: "hero has no file"}})
	for _, want := range []string{"FAIL [has-summary]", "**Fix:** Write .ralph/summary.md", "WARN [plan-diff]"} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
	os.WriteFile(filepath.Join(root, ".ralph", "summary.md"), []byte("Did it\n"), 0o644)
	if r := (HasSummary{}).Check(context.Background(), Env{Root: root}); r.Status != Pass {
		t.Fatalf("with summary: %s", r.Status)
	}
}

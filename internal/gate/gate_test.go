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

// TestSkipIsNeitherPassNorFailure: a skipped gate is named with its reason
// in the progress summary and in feedback.md, and blocks nothing.
func TestSkipIsNeitherPassNorFailure(t *testing.T) {
	results := []Result{
		{Gate: "has-summary", Status: Fail, Message: "summary.md is missing", Fix: "Write it."},
		{Gate: "plan-diff", Status: Skip, Message: "no plan to compare"},
		{Gate: "tests", Status: Pass, Message: "`go test ./...` passed"},
	}
	if got, want := Summary(results), "has-summary fail, plan-diff skip (no plan to compare), tests pass"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got, want := Tally(results), "1 passed, 1 failed, 1 skipped"; got != want {
		t.Errorf("Tally = %q, want %q", got, want)
	}
	if n := len(Failed(results)); n != 1 {
		t.Errorf("%d failures, want 1: a skip is not a failure", n)
	}
	fb := Feedback(results)
	if !strings.Contains(fb, "- SKIP [plan-diff] no plan to compare") {
		t.Errorf("feedback does not name the skipped gate and why:\n%s", fb)
	}
}

func TestChecksWork(t *testing.T) {
	tests := []struct {
		name  string
		gates []Gate
		want  string
	}{
		{"built-ins only", []Gate{HasSummary{}, &PlanDiff{}, &AppHasContent{}, &BuildSucceeds{}, &CSSThemeComplete{}, &Scope{}}, ""},
		{"a command gate", []Gate{HasSummary{}, &Command{GateName: "test", Argv: []string{"go", "test", "./..."}}}, "test"},
		{"an optional command gate cannot hold a completion", []Gate{&Command{GateName: "lint", Argv: []string{"golangci-lint"}, Optional: true}}, ""},
		{"an opted-in build", []Gate{&BuildSucceeds{OptIn: true}}, "build-succeeds"},
		{"an opted-in build turned off", []Gate{&BuildSucceeds{OptIn: true, Use: BuildOff}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(ChecksWork(tt.gates), ","); got != tt.want {
				t.Errorf("ChecksWork = %q, want %q", got, tt.want)
			}
		})
	}
}

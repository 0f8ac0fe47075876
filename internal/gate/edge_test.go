package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// printer is a failing command gate that prints prefix, then lines of
// "lineNNNNN" (9 characters and a newline) until it printed n bytes and
// one trailing newline, which the message leaves out.
func printer(n int, prefix string) *Command {
	script := fmt.Sprintf(`printf '%s'; i=0; while [ $i -lt %d ]; do printf 'line%%05d\n' $i; i=$((i+1)); done; exit 1`, prefix, (n+1-len(prefix))/10)
	return &Command{GateName: "print", Argv: []string{"sh", "-c", script}}
}

// A failing command's feedback keeps the end of its output, where the
// errors and the summary line are, up to outputTail bytes; output that
// fits is kept whole, with no mark of a cut.
func TestCommandOutputTail(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name          string
		bytes         int
		prefix        string
		first, last   string // lines the message must hold
		cut, notFirst bool
	}{
		{"short", 2999, "", "line00000", "line00299", false, false},
		{"exactly the tail", outputTail, "Z", "Zline00000", "line00399", false, false},
		{"long", 19999, "", "line01600", "line01999", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := printer(tt.bytes, tt.prefix).Check(context.Background(), Env{Root: root})
			if r.Status != Fail {
				t.Fatalf("status %s", r.Status)
			}
			for _, want := range []string{tt.first, tt.last} {
				if !strings.Contains(r.Message, want) {
					t.Errorf("the message lacks %s", want)
				}
			}
			if got := strings.Contains(r.Message, "…"); got != tt.cut {
				t.Errorf("cut mark shown %v, want %v", got, tt.cut)
			}
			if tt.notFirst && strings.Contains(r.Message, "line00000") {
				t.Error("the message keeps the start of a long output")
			}
		})
	}
}

// A command that dies by a signal fails its gate, and an optional one
// only warns.
func TestCommandKilledBySignal(t *testing.T) {
	root := t.TempDir()
	killed := []string{"sh", "-c", "kill -9 $$"}
	if r := (&Command{GateName: "k", Argv: killed}).Check(context.Background(), Env{Root: root}); r.Status != Fail {
		t.Errorf("killed by a signal: %s %q, want fail", r.Status, r.Message)
	}
	if r := (&Command{GateName: "k", Argv: killed, Optional: true}).Check(context.Background(), Env{Root: root}); r.Status != Warn {
		t.Errorf("optional, killed by a signal: %s %q, want warn", r.Status, r.Message)
	}
}

// A command with no timeout configured runs for as long as it needs, up
// to DefaultTimeout.
func TestCommandDefaultTimeout(t *testing.T) {
	r := (&Command{GateName: "slowish", Argv: []string{"sleep", "0.2"}}).Check(context.Background(), Env{Root: t.TempDir()})
	if r.Status != Pass {
		t.Errorf("a 200ms command: %s %q", r.Status, r.Message)
	}
}

// funcGate is a gate made of a function.
type funcGate struct {
	name  string
	check func(ctx context.Context) Result
}

func (g funcGate) Name() string                              { return g.name }
func (g funcGate) Check(ctx context.Context, env Env) Result { return g.check(ctx) }

// Canceling a gate run stops it before the next gate: only the gates that
// ran are reported. Each result carries its gate's name.
func TestRunAllCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran []string
	mk := func(name string, cancelIt bool) Gate {
		return funcGate{name, func(context.Context) Result {
			ran = append(ran, name)
			if cancelIt {
				cancel()
			}
			return Result{Status: Pass}
		}}
	}
	got := RunAll(ctx, []Gate{mk("first", false), mk("second", true), mk("third", false)}, Env{})
	if diff := cmp.Diff([]string{"first", "second"}, ran); diff != "" {
		t.Errorf("gates run (-want +got):\n%s", diff)
	}
	want := []Result{{Gate: "first", Status: Pass}, {Gate: "second", Status: Pass}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// Only failures block; warnings are listed after them, and the feedback's
// title says whether anything failed.
func TestFailedWarningsFeedback(t *testing.T) {
	results := []Result{
		{Gate: "a", Status: Pass},
		{Gate: "b", Status: Warn, Message: "looks thin", Fix: "add more"},
		{Gate: "c", Status: Fail, Message: "broken", Fix: "repair it"},
	}
	if diff := cmp.Diff([]Result{results[2]}, Failed(results)); diff != "" {
		t.Errorf("Failed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Result{results[1]}, Warnings(results)); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
	fb := Feedback(results)
	for _, want := range []string{"# Quality Gates Failed", "## FAIL [c]", "**Fix:** repair it", "## WARN [b]", "**Suggestion:** add more"} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
	if strings.Index(fb, "FAIL [c]") > strings.Index(fb, "WARN [b]") {
		t.Errorf("warnings come before failures:\n%s", fb)
	}
	fb = Feedback(results[:2])
	if !strings.HasPrefix(fb, "# Quality Gates Passed") || strings.Contains(fb, "**Fix:**") {
		t.Errorf("feedback with warnings only:\n%s", fb)
	}
	fb = Feedback([]Result{{Gate: "d", Status: Fail, Message: "no fix known"}})
	if strings.Contains(fb, "**Fix:**") {
		t.Errorf("a failure without a fix shows an empty one:\n%s", fb)
	}
}

// A summary.md of blank lines and spaces says nothing: has-summary fails.
func TestHasSummaryBlank(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".ralph"), 0o755)
	for _, blank := range []string{"", "\n\n", "   \t\n  \n"} {
		os.WriteFile(filepath.Join(root, ".ralph", "summary.md"), []byte(blank), 0o644)
		if r := (HasSummary{}).Check(context.Background(), Env{Root: root}); r.Status != Fail {
			t.Errorf("summary.md %q: %s, want fail", blank, r.Status)
		}
	}
}

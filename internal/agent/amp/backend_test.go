package amp

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/claude"
	"github.com/ralph-harness/ralph/internal/testutil"
)

func kinds(evs []agent.Event) string {
	var ks []string
	for _, e := range evs {
		k := string(e.Kind)
		if e.Tool != "" {
			k += ":" + e.Tool
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

// runFake runs the backend with a fake amp that prints testdata/NAME and
// saves its arguments and environment of interest to files in dir.
func runFake(t *testing.T, name string, cfg agent.Config) ([]agent.Event, agent.Result, error, string) {
	t.Helper()
	stream, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Binary = testutil.FakeBin(t, "amp", `
for a in "$@"; do printf '%s\n' "$a"; done > "$PWD/args"
[ -n "$GEMINI_SYSTEM_MD" ] && cat "$GEMINI_SYSTEM_MD" > "$PWD/system"
[ -n "$OPENCODE_CONFIG_CONTENT" ] && printf '%s' "$OPENCODE_CONFIG_CONTENT" > "$PWD/config"
cat "`+stream+`"
`)
	var evs []agent.Event
	res, err := New(cfg, nil).Run(context.Background(), agent.Request{Dir: dir, System: "RALPH-SYSTEM", Prompt: "RALPH-TASK"},
		func(e agent.Event) { evs = append(evs, e) })
	return evs, res, err, dir
}

func TestMissingBinary(t *testing.T) {
	cfg := agent.Config{Binary: "ralph-no-such-amp"}
	if Available(cfg) {
		t.Fatal("Available = true")
	}
	_, err := New(cfg, nil).Run(context.Background(), agent.Request{Dir: t.TempDir()}, nil)
	if !errors.Is(err, agent.ErrNotFound) || !strings.Contains(err.Error(), InstallHint) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzParse: no input makes the parser panic, and the tool-call count
// matches the tool-call events.
func FuzzParse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, name := range names {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, stream string) {
		p := newParser()
		n := 0
		sc := bufio.NewScanner(strings.NewReader(stream))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			p.Line(sc.Text(), func(e agent.Event) {
				if e.Kind == agent.KindToolCall {
					n++
				}
			})
		}
		if got := p.Outcome().Result.ToolCalls; got != n {
			t.Errorf("ToolCalls = %d, tool-call events = %d", got, n)
		}
	})
}

func newParser() *claude.Parser { return claude.NewParser() }

func TestArgs(t *testing.T) {
	got := New(agent.Config{}, nil).Args(agent.Request{System: "S", Prompt: "P"})
	want := []string{"amp", "--execute", "<system-instructions>\nS\n</system-instructions>\n\nP", "--stream-json", "--dangerously-allow-all"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("args = %q", got)
	}
}

func TestRunSuccess(t *testing.T) {
	evs, res, err, _ := runFake(t, "success.jsonl", agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := "info text tool_call:create_file tool_result:create_file text usage"
	if got := kinds(evs); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 1 || res.Usage.InputTokens != 250 {
		t.Errorf("result = %+v", res)
	}
}

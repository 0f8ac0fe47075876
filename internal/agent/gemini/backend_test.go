package gemini

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
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

// runFake runs the backend with a fake gemini that prints testdata/NAME and
// saves its arguments and environment of interest to files in dir.
func runFake(t *testing.T, name string, cfg agent.Config) ([]agent.Event, agent.Result, error, string) {
	t.Helper()
	stream, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Binary = testutil.FakeBin(t, "gemini", `
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
	cfg := agent.Config{Binary: "ralph-no-such-gemini"}
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

func newParser() *Parser { return NewParser() }

func TestArgs(t *testing.T) {
	got := strings.Join(New(agent.Config{Model: "gemini-2.5-pro", Args: []string{"--x"}}, nil).Args(agent.Request{Prompt: "P"}), " ")
	if want := "gemini --output-format stream-json --approval-mode yolo -m gemini-2.5-pro --x --prompt P"; got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
}

func TestRunSuccess(t *testing.T) {
	evs, res, err, dir := runFake(t, "success.jsonl", agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := "info text text tool_call:write_file tool_result:write_file tool_call:run_shell_command tool_result:run_shell_command text text usage"
	if got := kinds(evs); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if !evs[6].IsError || evs[4].IsError || !strings.Contains(string(evs[3].Input), `"file_path":"hello.txt"`) {
		t.Errorf("tool events = %+v", evs[3:7])
	}
	if res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 2 ||
		res.Usage != (agent.Usage{InputTokens: 300, OutputTokens: 60, CacheReadTokens: 10}) {
		t.Errorf("result = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "system")); string(b) != "RALPH-SYSTEM" {
		t.Errorf("GEMINI_SYSTEM_MD held %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "args")); !strings.HasSuffix(string(b), "--prompt\nRALPH-TASK\n") {
		t.Errorf("args = %q", b)
	}
}

func TestRunRateLimited(t *testing.T) {
	_, _, err, _ := runFake(t, "ratelimit.jsonl", agent.Config{})
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) || !strings.Contains(rl.Message, "429") {
		t.Fatalf("err = %v, want a RateLimitError", err)
	}
}

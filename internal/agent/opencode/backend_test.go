package opencode

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

// runFake runs the backend with a fake opencode that prints testdata/NAME and
// saves its arguments and environment of interest to files in dir.
func runFake(t *testing.T, name string, cfg agent.Config) ([]agent.Event, agent.Result, error, string) {
	t.Helper()
	stream, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Binary = testutil.FakeBin(t, "opencode", `
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
	cfg := agent.Config{Binary: "ralph-no-such-opencode"}
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
	got := strings.Join(New(agent.Config{Model: "anthropic/claude-sonnet-4-5"}, nil).Args(agent.Request{Prompt: "P"}), " ")
	if want := "opencode run --format json --model anthropic/claude-sonnet-4-5 P"; got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
}

func TestRunSuccess(t *testing.T) {
	evs, res, err, dir := runFake(t, "success.jsonl", agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := "text tool_call:write tool_result:write usage tool_call:bash tool_result:bash text usage"
	if got := kinds(evs); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	if !evs[5].IsError || evs[2].IsError || !strings.Contains(string(evs[1].Input), `"filePath":"/work/hello.txt"`) {
		t.Errorf("tool events = %+v", evs[1:6])
	}
	want2 := agent.Usage{InputTokens: 300, OutputTokens: 60, CacheReadTokens: 50, CacheWriteTokens: 5, CostUSD: 0.003}
	if res.Final != "Done. <promise>COMPLETE</promise>" || res.ToolCalls != 2 ||
		res.Usage.InputTokens != want2.InputTokens || res.Usage.OutputTokens != want2.OutputTokens ||
		res.Usage.CacheReadTokens != 50 || res.Usage.CacheWriteTokens != 5 || res.Usage.CostUSD < 0.0029 || res.Usage.CostUSD > 0.0031 {
		t.Errorf("result = %+v", res)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "config"))
	if !strings.Contains(string(b), `"instructions":["`) {
		t.Errorf("OPENCODE_CONFIG_CONTENT = %q", b)
	}
}

func TestRunRateLimited(t *testing.T) {
	_, _, err, _ := runFake(t, "ratelimit.jsonl", agent.Config{})
	var rl *agent.RateLimitError
	if !errors.As(err, &rl) || rl.ResetAt.IsZero() {
		t.Fatalf("err = %v, want a RateLimitError with a reset time", err)
	}
}

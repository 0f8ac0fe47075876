// Package clitest holds what the tests of the CLI backends (claude, codex,
// opencode, gemini, qwen, copilot, amp) share: feeding a stream to a cliagent.Parser,
// naming the events it emitted, the fuzz target every parser must pass,
// the missing-program check, and running a backend against a fake program
// that prints a recorded stream.
package clitest

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// Parse feeds every line of stream to p and returns what it emitted and
// its outcome.
func Parse(p cliagent.Parser, stream string) ([]agent.Event, cliagent.Outcome) {
	var evs []agent.Event
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		p.Line(sc.Text(), func(e agent.Event) { evs = append(evs, e) })
	}
	return evs, p.Outcome()
}

// ParseFile is Parse of the file testdata/NAME.
func ParseFile(t testing.TB, p cliagent.Parser, name string) ([]agent.Event, cliagent.Outcome) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(p, string(b))
}

// Kinds names evs in order, separated by spaces: each event's kind,
// followed by ":TOOL" when it names a tool.
func Kinds(evs []agent.Event) string {
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

// WantKinds reports an error unless the events evs name, as Kinds names
// them, are want.
func WantKinds(t testing.TB, evs []agent.Event, want string) {
	t.Helper()
	if got := Kinds(evs); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
}

// FuzzParser checks that no stream makes a parser from newParser panic and
// that its tool-call count always matches the tool-call events it emitted.
// It adds testdata/*.jsonl to the seeds go test reads from testdata/fuzz.
func FuzzParser(f *testing.F, newParser func() cliagent.Parser) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, name := range names {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, stream string) {
		evs, out := Parse(newParser(), stream)
		n := 0
		for _, e := range evs {
			if e.Kind == agent.KindToolCall {
				n++
			}
		}
		if n != out.Result.ToolCalls {
			t.Errorf("ToolCalls = %d, tool-call events = %d", out.Result.ToolCalls, n)
		}
	})
}

// MissingBinary checks a backend whose configured program does not exist:
// available reports false, and a run fails with agent.ErrNotFound naming
// the program and saying how to install it (hint).
func MissingBinary(t *testing.T, newAgent func(agent.Config) agent.Agent, available func(agent.Config) bool, hint string) {
	t.Helper()
	cfg := agent.Config{Binary: "ralph-no-such-" + newAgent(agent.Config{}).Name()}
	if available(cfg) {
		t.Fatalf("Available(%s) = true for a missing program", cfg.Binary)
	}
	_, err := newAgent(cfg).Run(context.Background(), agent.Request{Dir: t.TempDir()}, nil)
	if !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), cfg.Binary) || !strings.Contains(err.Error(), hint) {
		t.Errorf("err = %v, want the program's name and the install hint", err)
	}
}

// Run is what a backend did when run against a fake program.
type Run struct {
	Events []agent.Event
	Result agent.Result
	Err    error
	// Dir is the workspace the program ran in; the fake saved its
	// arguments there, one a line, in the file "args".
	Dir string
}

// RunFake runs the backend newAgent builds from cfg, with cfg.Binary a
// fake program that saves its arguments to DIR/args, runs the shell
// commands extra (with DIR as its working directory), and prints
// testdata/STREAM. The request carries the system prompt "RALPH-SYSTEM"
// and the prompt "RALPH-TASK".
func RunFake(t *testing.T, newAgent func(agent.Config) agent.Agent, cfg agent.Config, stream, extra string) Run {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", stream))
	if err != nil {
		t.Fatal(err)
	}
	name := newAgent(agent.Config{}).Name()
	cfg.Binary = testutil.FakeBin(t, name, `
for a in "$@"; do printf '%s\n' "$a"; done > "$PWD/args"
`+extra+`
cat "`+path+`"
`)
	r := Run{Dir: t.TempDir()}
	r.Result, r.Err = newAgent(cfg).Run(context.Background(),
		agent.Request{Dir: r.Dir, System: "RALPH-SYSTEM", Prompt: "RALPH-TASK"},
		func(e agent.Event) { r.Events = append(r.Events, e) })
	return r
}

// Events collects emitted events; Emit may be called from any goroutine.
type Events struct {
	mu  sync.Mutex
	all []agent.Event
}

// Emit records ev.
func (e *Events) Emit(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// Of returns the events of kind, in order.
func (e *Events) Of(kind agent.Kind) []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []agent.Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

// The end-to-end tests in e2e_*_test.go run a real ralph process driving a
// real agent CLI (Claude Code, Codex) against the fake model servers of
// internal/testutil: everything but the model is the real thing.

// appPlan is a valid app plan (the one of run_plan_phase.txtar, with a
// preset the harness applies at PLAN → BUILD).
const appPlan = `<App name="Tideline">
  <Theme mood="tangerine" />
  <Screen name="home">
    <Section gumdrop="hero" />
    <Section gumdrop="features" />
    <Section gumdrop="cta" />
  </Screen>
</App>
`

// heroSection and appEntry are what the build iteration writes: a section
// and the entry component that renders it (the app-has-content gate).
const (
	heroSection = "export const Hero = () => <h1>Tideline</h1>\n"
	appEntry    = "import './index.css'\nimport { Hero } from './sections/HeroSection'\n\nexport default function App() {\n  return <main><Hero /></main>\n}\n"
)

// writeConfig writes ralph.toml into dir.
func writeConfig(t *testing.T, dir, toml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "ralph.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tomlList returns ss as a TOML array of strings.
func tomlList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ralphResult is how a ralph process ended.
type ralphResult struct {
	out  string
	code int
	took time.Duration
}

// runRalph runs the ralph binary in dir with args and returns its output
// and exit code; it fails the test when ralph does not end within limit.
func runRalph(t *testing.T, bin, dir string, limit time.Duration, args ...string) ralphResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	res := ralphResult{out: out.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("ralph %v did not end within %s:\n%s", args, limit, res.out)
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("ralph %v: %v", args, err)
	}
	t.Logf("ralph %s: exit %d after %s", strings.Join(args, " "), res.code, res.took.Round(time.Millisecond))
	return res
}

// runRecord is what the store holds about the latest task of a workspace.
type runRecord struct {
	task   store.Task
	its    []store.Iteration
	events []store.Event
}

// readRun opens dir's .ralph/ralph.db and reads the latest task.
func readRun(t *testing.T, dir string) runRecord {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var r runRecord
	if r.task, err = st.LatestTask(ctx); err != nil {
		t.Fatal(err)
	}
	if r.its, err = st.Iterations(ctx, r.task.ID); err != nil {
		t.Fatal(err)
	}
	if r.events, err = st.EventsAfter(ctx, r.task.ID, 0, 100000); err != nil {
		t.Fatal(err)
	}
	return r
}

// outcomes lists the iterations' outcomes, in order.
func (r runRecord) outcomes() string {
	var out []string
	for _, it := range r.its {
		out = append(out, fmt.Sprintf("%d:%s", it.Number, it.Outcome))
	}
	return strings.Join(out, ",")
}

// of returns the events of kind.
func (r runRecord) of(kind string) []store.Event {
	var out []store.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// dump is the event stream as text, for failure messages.
func (r runRecord) dump() string {
	var b strings.Builder
	for _, e := range r.events {
		fmt.Fprintf(&b, "  it%d %s/%s %s %.200s %.200s\n", e.Iteration, e.Source, e.Kind, e.Tool, e.Text, e.Data)
	}
	return b.String()
}

// mustRead returns the content of dir/rel.
func mustRead(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// e2eShort skips a real-process test in -short mode.
func e2eShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a real ralph process and a real agent CLI")
	}
}

package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/claude"
	"github.com/ralph-harness/ralph/internal/stall"
)

// fakeClaude writes a stand-in claude program that reads its prompt and
// prints the stream-json session Claude Code recorded in
// internal/agent/claude/testdata/success.jsonl (two tool calls, a result
// with cost), without its completion promise so that every iteration
// continues. It returns the program's path.
func fakeClaude(tb testing.TB) string {
	tb.Helper()
	rec, err := os.ReadFile(filepath.Join("..", "agent", "claude", "testdata", "success.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	stream := filepath.Join(dir, "session.jsonl")
	if err := os.WriteFile(stream, []byte(strings.ReplaceAll(string(rec), "<promise>COMPLETE</promise>", "")), 0o644); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "claude")
	script := "#!/bin/sh\ncat >/dev/null\ncat '" + stream + "'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return bin
}

func median(ms []float64) float64 {
	if len(ms) == 0 {
		return 0
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return s[len(s)/2]
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkIterationOverheadClaude is BenchmarkIterationOverhead with the
// claude backend running a fake claude program that prints a recorded
// stream-json session and exits: the whole per-iteration path of a real
// run (process start in its own group, stream parsing, every event into
// the store, usage and cost) over the same 500-file project. The fake
// program's own run time (started the same way, the prompt on stdin) is
// measured separately; ms/iter-median is the median iteration minus the
// median fake run, ralph's overhead per iteration. It also reports
// ms/iter-total-median and ms/fake-median.
func BenchmarkIterationOverheadClaude(b *testing.B) {
	ws, st := newBenchWorkspace(b, 500)
	bin := fakeClaude(b)
	ag := claude.New(agent.Config{Binary: bin}, nil)

	var starts []time.Time
	rep := ReporterFunc(func(p Progress) {
		if p.Stage == StageIteration {
			starts = append(starts, time.Now())
		}
	})
	// The canned session repeats the same calls and changes nothing, so
	// the stall detectors (still run each iteration) must not end the run.
	never := stall.Config{RepeatThreshold: 1 << 30, NoProgressThreshold: 1 << 30, RepeatedErrorThreshold: 1 << 30}
	e := New(ws, st, Options{Agent: ag, Limits: Limits{MaxIterations: b.N}, Stall: never, Reporter: rep})
	b.ResetTimer()
	out, err := e.Run(context.Background(), "benchmark the loop with claude")
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if out.Reason != MaxIterations {
		b.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	if out.CostUSD <= 0 {
		b.Fatalf("cost %v: the recorded session's cost did not reach the store", out.CostUSD)
	}
	var iter []float64
	for i := 1; i < len(starts); i++ {
		iter = append(iter, millis(starts[i].Sub(starts[i-1])))
	}
	if len(iter) == 0 {
		return
	}

	// The fake alone, run as often as the loop ran it.
	prompt := strings.Repeat("p", 4096)
	var fake []float64
	for range len(iter) {
		cmd := exec.Command(bin)
		cmd.Dir = ws.Root
		cmd.Stdin = strings.NewReader(prompt)
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		fake = append(fake, millis(time.Since(t0)))
	}
	total, alone := median(iter), median(fake)
	b.ReportMetric(total-alone, "ms/iter-median")
	b.ReportMetric(total, "ms/iter-total-median")
	b.ReportMetric(alone, "ms/fake-median")
}

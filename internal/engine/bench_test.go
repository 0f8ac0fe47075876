package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// agentFunc is an Agent built from a function, for tests.
type agentFunc func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error)

func (f agentFunc) Name() string { return "func" }
func (f agentFunc) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	return f(ctx, req, emit)
}

var _ agent.Agent = agentFunc(nil)

// idleAgent does next to nothing: it writes its iteration number to one
// small file and reports that as its one tool call, so no iteration counts
// as a completion or as a stall, and the loop runs to its limit.
var idleAgent = agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	emit(agent.Event{Kind: agent.KindToolCall, Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"path":"progress.txt","n":%d}`, req.Iteration))})
	err := os.WriteFile(filepath.Join(req.Dir, "progress.txt"), []byte(fmt.Sprint(req.Iteration)), 0o644)
	return agent.Result{ToolCalls: 1, Final: "nothing to do"}, err
})

// newBenchWorkspace makes a git repository with a small project in it.
func newBenchWorkspace(tb testing.TB, files int) (*workspace.Workspace, *store.Store) {
	tb.Helper()
	dir := tb.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v\n%s", err, out)
	}
	for i := range files {
		path := filepath.Join(dir, "src", fmt.Sprintf("pkg%d", i%20), fmt.Sprintf("file%d.go", i))
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(fmt.Sprintf("package p\n\n// File %d.\nvar X%d = %d\n", i, i, i)), 0o644)
	}
	ctx := context.Background()
	ws, err := workspace.Open(ctx, dir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return ws, st
}

// BenchmarkIterationOverhead measures what the harness itself costs per
// iteration — state files, prompt building, the store, stall detection
// with its tree hash over a 500-file project — with an agent that does
// nothing. It reports the median per iteration; the target is < 15 ms.
func BenchmarkIterationOverhead(b *testing.B) {
	ws, st := newBenchWorkspace(b, 500)
	var starts []time.Time
	rep := ReporterFunc(func(p Progress) {
		if p.Stage == StageIteration {
			starts = append(starts, time.Now())
		}
	})
	e := New(ws, st, Options{Agent: idleAgent, Limits: Limits{MaxIterations: b.N}, Reporter: rep})
	b.ResetTimer()
	out, err := e.Run(context.Background(), "benchmark the loop")
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if out.Reason != MaxIterations {
		b.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	var per []float64
	for i := 1; i < len(starts); i++ {
		per = append(per, float64(starts[i].Sub(starts[i-1]).Microseconds())/1000)
	}
	if len(per) > 0 {
		slices.Sort(per)
		b.ReportMetric(per[len(per)/2], "ms/iter-median")
	}
}

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/stall"
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
// with its change tracking — with an agent that does nothing, over a
// committed project of RALPH_BENCH_FILES files (comma-separated sizes,
// default 500; one sub-benchmark each). RALPH_BENCH_TRACKER=both runs each
// size twice: tracker=watch (the default, stall.Tracker watching the tree)
// and tracker=walk (the reference full TreeHash walk, stall.WalkEnv). It
// reports the median per iteration; the target is < 15 ms.
func BenchmarkIterationOverhead(b *testing.B) {
	sizes := []int{500}
	if env := os.Getenv("RALPH_BENCH_FILES"); env != "" {
		sizes = nil
		for f := range strings.SplitSeq(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("RALPH_BENCH_FILES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	modes := []string{"watch"}
	if os.Getenv("RALPH_BENCH_TRACKER") == "both" {
		modes = []string{"walk", "watch"}
	}
	for _, n := range sizes {
		dir := benchProject(b, n)
		for _, mode := range modes {
			b.Run(fmt.Sprintf("files=%d/tracker=%s", n, mode), func(b *testing.B) {
				if mode == "walk" {
					b.Setenv(stall.WalkEnv, "1")
				} else {
					b.Setenv(stall.WalkEnv, "")
				}
				ws, st := freshState(b, dir)
				benchIterations(b, ws, st)
			})
		}
	}
}

// benchProject makes a git repository with a committed project of n files
// in 20 packages, for every run of one size to share.
func benchProject(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	gitRun := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgSign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitRun("init", "-q")
	for i := range n {
		path := filepath.Join(dir, "src", fmt.Sprintf("pkg%d", i%20), fmt.Sprintf("file%d.go", i))
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(fmt.Sprintf("package p\n\n// File %d.\nvar X%d = %d\n", i, i, i)), 0o644)
	}
	gitRun("add", "-A")
	gitRun("commit", "-q", "-m", "project")
	return dir
}

// freshState gives the project at dir a new .ralph directory and store.
func freshState(b *testing.B, dir string) (*workspace.Workspace, *store.Store) {
	b.Helper()
	ctx := context.Background()
	if err := os.RemoveAll(filepath.Join(dir, workspace.Dir)); err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return ws, st
}

// benchIterations runs b.N idle iterations and reports their median.
func benchIterations(b *testing.B, ws *workspace.Workspace, st *store.Store) {
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

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// Between two agent runs, an iteration that changed nothing runs none of
// the git that records its tree, one that changed a file reads neither the
// whole working tree (git status: the Tracker named the file) nor the
// private index (update-index, write-tree: its tree is built from the
// trees on the file's path), the trees the dashboard diffs are
// right either way, and the task's chain holds every iteration when the
// task ends.
func TestIterationTreesFromTheTracker(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 20)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	log := testutil.LogGit(t)
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	// lines is how many git calls the log holds at each agent's start
	// and end.
	lines := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
	var starts, ends []int
	writes := map[int]bool{1: true, 3: true, 5: true}
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		starts = append(starts, lines())
		defer func() { ends = append(ends, lines()) }()
		emit(agent.Event{Kind: agent.KindToolCall, Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, req.Iteration))})
		if writes[req.Iteration] {
			err := os.WriteFile(filepath.Join(req.Dir, "src", "pkg0", "file0.go"), []byte(fmt.Sprintf("package p\n\nvar Y = %d\n", req.Iteration)), 0o644)
			return agent.Result{ToolCalls: 1, Final: "wrote"}, err
		}
		return agent.Result{ToolCalls: 1, Final: "read"}, nil
	})
	out, err := New(ws, st, Options{Agent: a, Snapshots: snaps, Limits: Limits{MaxIterations: 6}}).Run(ctx, "change a file now and then")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != MaxIterations {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(string(b), "\n")
	// The gap after iteration i's agent: the git calls up to the next
	// agent's start.
	recording := func(i int) []string {
		var subs []string
		for _, c := range calls[ends[i-1]:starts[i]] {
			for _, sub := range []string{"status", "update-index", "write-tree", "add", "mktree"} {
				if strings.Contains(" "+c+" ", " "+sub+" ") {
					subs = append(subs, sub)
				}
			}
		}
		return subs
	}
	for _, i := range []int{2, 4} {
		if got := recording(i); len(got) != 0 {
			t.Errorf("iteration %d changed nothing, and its gap ran git %v", i, got)
		}
	}
	for _, i := range []int{3, 5} {
		// The first change (iteration 1) started hash-object and mktree;
		// they answer every later one.
		if got := recording(i); len(got) != 0 {
			t.Errorf("iteration %d changed a file, and its gap started git %v, want none (no status, update-index or write-tree; the running mktree)", i, got)
		}
	}

	its, err := st.Iterations(ctx, out.TaskID)
	if err != nil || len(its) != 6 {
		t.Fatalf("iterations = %d %v", len(its), err)
	}
	tree := map[int]string{}
	for _, it := range its {
		tree[it.Number] = it.Tree
	}
	for i := 2; i <= 6; i++ {
		diff, err := snaps.StatTrees(ctx, tree[i-1], tree[i])
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[writes[i]]; diff.Files != want {
			t.Errorf("iteration %d's diff holds %d files, want %d", i, diff.Files, want)
		}
	}
	chain, err := exec.Command(realGit, "-C", ws.Root, "rev-list", "--count", fmt.Sprintf("%stask-%d", snapshot.IterationRefPrefix, out.Task)).Output()
	if err != nil || strings.TrimSpace(string(chain)) != "7" {
		t.Errorf("the chain holds %q commits (%v), want 7: iterations 0 to 6", chain, err)
	}
}

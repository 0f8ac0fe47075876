package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// A task's iterations learn what changed from its Tracker, but what a
// rollback restores and what the guard judges come from whole reads of
// the tree: the pre-task snapshot's git status and the protected-files
// check's, which the post-task snapshot shares, and no other. Iteration 0 is the
// pre-task tree with ralph's files brought up to date. A write the
// Tracker cannot see (through a hard link from outside the tree) still
// reaches task-N-post, the guard still sees a changed protected file, and
// every tree is the one a full read gives.
func TestTaskBoundaryReadsTheTreeWhole(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 20)
	write := func(rel, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws.Root, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("src/pkg0/a_test.go", "package p\n")
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	log := testutil.LogGit(t)
	// A hard link outside the tree: writes through it reach a file of
	// the tree with no event in the tree's directories.
	alias := linkOutside(t, filepath.Join(ws.Root, "src", "pkg2", "file2.go"))
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if req.Iteration == 1 {
			// Looks around, changes nothing the progress hash counts:
			// only a file in .ralph/ beside ralph's bookkeeping.
			write(".ralph/notes.md", "looked around\n")
			emit(agent.Event{Kind: agent.KindToolCall, Tool: "read", Input: json.RawMessage(`{}`)})
			return agent.Result{ToolCalls: 1, Final: "looked"}, nil
		}
		// A protected file changed, a file removed, one added; then done
		// (no tool call is the completion signal).
		write("src/pkg0/a_test.go", "package p\n\n// weakened\n")
		write("src/pkg1/new.go", "package p\n")
		write(".ralph/summary.md", "changed a few files\n")
		if err := os.WriteFile(alias, []byte("package p\n\n// through a link\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return agent.Result{Final: "done"}, os.Remove(filepath.Join(req.Dir, "src", "pkg1", "file1.go"))
	})
	// A built-in gate runs in ralph's process: task-1-post still shares
	// the protected-files check's read.
	opt := Options{Agent: a, Snapshots: snaps, Limits: Limits{MaxIterations: 3}, Guard: Guard{OnChange: config.GuardAllow}, Gates: []gate.Gate{gate.HasSummary{}}}
	out, err := New(ws, st, opt).Run(ctx, "change a few files")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	if out.Tampers != 1 {
		t.Errorf("the guard recorded %d changes to protected files, want 1 (src/pkg0/a_test.go)", out.Tampers)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// The pre-task snapshot's reads: a git status (and, the tree never
	// committed, a git add -A); none after it.
	pre, after, ok := strings.Cut(string(b), "snapshot task-1-pre --stdin\n")
	if !ok {
		t.Fatalf("no pre-task snapshot among the git calls:\n%s", b)
	}
	if n := strings.Count(pre, " status "); n != 1 {
		t.Errorf("the pre-task snapshot ran git status %d times, want once", n)
	}
	if n := strings.Count(after, " status "); n != 1 {
		t.Errorf("after the pre-task snapshot the task ran git status %d times, want 1 (the protected-files check, which task-1-post shares):\n%s", n, after)
	}

	// Every tree as a full read has it, ralph's own files aside.
	full, err := snaps.Save(ctx, snapshot.Manual(time.Now()), "a full read")
	if err != nil {
		t.Fatal(err)
	}
	differ := func(a, b string) string {
		t.Helper()
		out, err := exec.Command(realGit, "-C", ws.Root, "diff-tree", "-r", "--name-status", "--no-renames", a, b, "--", ".", ":(exclude).ralph").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	start, err := snaps.Resolve(ctx, snapshot.TaskPre(out.Task))
	if err != nil {
		t.Fatal(err)
	}
	post, err := snaps.Resolve(ctx, snapshot.TaskPost(out.Task))
	if err != nil {
		t.Fatal(err)
	}
	if d := differ(post.Tree, full.Tree); d != "" {
		t.Errorf("task-%d-post differs from the tree:\n%s", out.Task, d)
	}
	its, err := st.Iterations(ctx, out.TaskID)
	if err != nil || len(its) != 2 {
		t.Fatalf("iterations = %d %v", len(its), err)
	}
	if d := differ(its[1].Tree, full.Tree); d != "" {
		t.Errorf("iteration 2's tree differs from the tree:\n%s", d)
	}
	// ralph's bookkeeping too: task-N-post holds .ralph/ as it was then.
	ralph, err := exec.Command(realGit, "-C", ws.Root, "diff-tree", "-r", "--name-only", post.Tree, full.Tree, "--", ".ralph").Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(ralph) > 0 {
		t.Errorf("task-%d-post's .ralph/ differs from the tree's (nothing changes it after):\n%s", out.Task, ralph)
	}
	zero := snaps.IterationBase(ctx, out.Task)
	if d := differ(start.Tree, zero); d != "" {
		t.Errorf("iteration 0's tree differs from the pre-task snapshot's:\n%s", d)
	}
	if got, want := differ(start.Tree, post.Tree), "M\tsrc/pkg0/a_test.go\nD\tsrc/pkg1/file1.go\nA\tsrc/pkg1/new.go\nM\tsrc/pkg2/file2.go"; got != want {
		t.Errorf("the task's change from task-%d-pre to task-%d-post =\n%s\nwant\n%s", out.Task, out.Task, got, want)
	}
}

// The protected-files check reads the whole tree: a protected file
// changed only through a hard link from outside the tree, which no
// directory watch of the tree reports, is seen and put back, and
// task-N-post, which shares that read, holds it as put back: the tree
// a full read gives.
func TestGuardSeesAChangeThroughAHardLink(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 20)
	protected := filepath.Join(ws.Root, "src", "pkg0", "a_test.go")
	if err := os.WriteFile(protected, []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := linkOutside(t, protected)
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		return agent.Result{Final: "done"}, os.WriteFile(alias, []byte("package p\n\n// weakened\n"), 0o644)
	})
	opt := Options{Agent: a, Snapshots: snaps, Limits: Limits{MaxIterations: 3}, Guard: Guard{OnChange: config.GuardRestore}}
	out, err := New(ws, st, opt).Run(ctx, "weaken a test")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	if out.Tampers != 1 {
		t.Errorf("the guard recorded %d changes to protected files, want 1 (src/pkg0/a_test.go, written through a hard link)", out.Tampers)
	}
	if b, _ := os.ReadFile(protected); string(b) != "package p\n" {
		t.Errorf("src/pkg0/a_test.go = %q, want it put back", b)
	}
	post, err := snaps.ReadFile(ctx, snapshot.TaskPost(out.Task), "src/pkg0/a_test.go")
	if err != nil || string(post) != "package p\n" {
		t.Errorf("task-%d-post holds src/pkg0/a_test.go as %q (%v), want it as put back", out.Task, post, err)
	}
	full, err := snaps.Save(ctx, snapshot.Manual(time.Now()), "a full read")
	if err != nil {
		t.Fatal(err)
	}
	p, err := snaps.Resolve(ctx, snapshot.TaskPost(out.Task))
	if err != nil {
		t.Fatal(err)
	}
	if p.Tree != full.Tree {
		d, _ := exec.Command("git", "-C", ws.Root, "diff-tree", "-r", "--name-status", p.Tree, full.Tree).Output()
		t.Errorf("task-%d-post differs from a full read of the tree:\n%s", out.Task, d)
	}
}

// A command gate's process may write anywhere in the tree: task-N-post
// then reads the whole tree again rather than share the protected-files
// check's read, and holds what the gate wrote.
func TestPostReadsAgainAfterACommandGate(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 20)
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Written by a hard link's other name: no watch of the tree sees it.
	target := filepath.Join(ws.Root, "src", "pkg3", "file3.go")
	alias := linkOutside(t, target)
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		return agent.Result{Final: "done"}, os.WriteFile(filepath.Join(req.Dir, ".ralph", "summary.md"), []byte("done\n"), 0o644)
	})
	g := &gate.Command{GateName: "writes", Argv: []string{"sh", "-c", "echo built > gate-out.txt && echo '// the gate' >> " + alias}}
	opt := Options{Agent: a, Snapshots: snaps, Limits: Limits{MaxIterations: 3}, Gates: []gate.Gate{g}}
	out, err := New(ws, st, opt).Run(ctx, "build")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	postHolds(t, snaps, ws.Root, out.Task, "the gate", "gate-out.txt", "src/pkg3/file3.go")
}

// build-succeeds with use = "npm" runs `npm run build`, package.json's
// script, which the agent may have written: task-N-post then reads the
// whole tree again rather than share the protected-files check's read,
// and holds what the script wrote through a hard link, which no watch of
// the tree sees.
func TestPostReadsAgainAfterAnNpmBuild(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npm is not installed")
		}
		t.Skip("npm is not installed")
	}
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 20)
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws.Root, "src", "pkg3", "file3.go")
	alias := linkOutside(t, target)
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		script, _ := json.Marshal(map[string]map[string]string{"scripts": {"build": "echo built > dist.txt && echo '// the build' >> " + alias}})
		if err := os.WriteFile(filepath.Join(req.Dir, "package.json"), script, 0o644); err != nil {
			return agent.Result{}, err
		}
		if err := os.MkdirAll(filepath.Join(req.Dir, "node_modules"), 0o755); err != nil {
			return agent.Result{}, err
		}
		return agent.Result{Final: "done"}, os.WriteFile(filepath.Join(req.Dir, ".ralph", "summary.md"), []byte("done\n"), 0o644)
	})
	build := &gate.BuildSucceeds{OptIn: true, Use: gate.BuildNpm}
	opt := Options{Agent: a, Snapshots: snaps, Limits: Limits{MaxIterations: 3}, Gates: []gate.Gate{gate.HasSummary{}, build}}
	out, err := New(ws, st, opt).Run(ctx, "build")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	postHolds(t, snaps, ws.Root, out.Task, "npm run build", "dist.txt", "src/pkg3/file3.go")
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "the build") {
		t.Fatalf("src/pkg3/file3.go = %q: npm run build did not run", b)
	}
}

// A gate says whether it may write the tree (a process it starts that
// the agent controls may); one that does not say may.
func TestMayWriteTheTree(t *testing.T) {
	withCheck := t.TempDir()
	task := "# Task: signup\nType: mutation\n\n## Requirements\n\n- [FIX] the CTA links to /signup — check: [\"npm\", \"test\"]\n"
	if err := os.MkdirAll(filepath.Join(withCheck, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withCheck, ".ralph", "task.md"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	without := t.TempDir()
	cases := []struct {
		name string
		g    gate.Gate
		root string
		want bool
	}{
		{"has-summary", gate.HasSummary{}, without, false},
		{"plan-diff", &gate.PlanDiff{}, without, false},
		{"app-has-content", &gate.AppHasContent{}, without, false},
		{"css-theme-complete", &gate.CSSThemeComplete{}, without, false},
		{"ui-renders", &gate.UIRenders{}, without, false},
		{"build-succeeds with esbuild", &gate.BuildSucceeds{OptIn: true}, without, false},
		{"build-succeeds off", &gate.BuildSucceeds{OptIn: true, Use: gate.BuildOff}, without, false},
		{"build-succeeds with npm", &gate.BuildSucceeds{OptIn: true, Use: gate.BuildNpm}, without, true},
		{"scope without requirement checks", &gate.Scope{}, without, false},
		{"scope running a requirement's check", &gate.Scope{}, withCheck, true},
		{"command", &gate.Command{GateName: "test", Argv: []string{"true"}}, without, true},
		{"a gate that does not say", unknownGate{}, without, true},
	}
	for _, tc := range cases {
		if got := mayWriteTheTree(tc.g, gate.Env{Root: tc.root, Task: 1}); got != tc.want {
			t.Errorf("%s: mayWriteTheTree = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// unknownGate is a gate the engine knows nothing of.
type unknownGate struct{}

func (unknownGate) Name() string { return "unknown" }

func (unknownGate) Check(context.Context, gate.Env) gate.Result {
	return gate.Result{Status: gate.Pass}
}

// A person asked about a protected change may change the tree while the
// request waits: task-N-post then reads the whole tree again, and holds
// a file the person changed meanwhile through a hard link, which no
// directory watch of the tree reports.
func TestPostReadsAgainAfterAPersonWasAsked(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 20)
	protected := filepath.Join(ws.Root, "src", "pkg0", "a_test.go")
	if err := os.WriteFile(protected, []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alias := linkOutside(t, filepath.Join(ws.Root, "src", "pkg3", "file3.go"))
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		return agent.Result{Final: "done"}, os.WriteFile(protected, []byte("package p\n\n// weakened\n"), 0o644)
	})
	opt := Options{Agent: a, Snapshots: snaps, Limits: Limits{MaxIterations: 3}, Guard: Guard{OnChange: config.GuardAsk, Timeout: time.Minute}}
	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := New(ws, st, opt).Run(ctx, "weaken a test")
		done <- result{out, err}
	}()
	var req store.HumanRequest
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		pending, err := st.PendingHumanRequests(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) > 0 {
			req = pending[0]
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the run ended without asking: %+v %v", r.out, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no request for the protected change")
		}
	}
	if err := os.WriteFile(alias, []byte("package p\n\n// the person's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ResolveHuman(ctx, req.ID, store.HumanApproved, ""); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.out.Reason != Completed {
		t.Fatalf("run = %+v %v", r.out, r.err)
	}
	got, err := snaps.ReadFile(ctx, snapshot.TaskPost(r.out.Task), "src/pkg3/file3.go")
	if err != nil || !strings.Contains(string(got), "the person's edit") {
		t.Errorf("task-%d-post holds src/pkg3/file3.go as %q (%v), want the person's edit made while the request waited", r.out.Task, got, err)
	}
}

// linkOutside makes a hard link to target outside the tree and returns
// its name: a write through it reaches a file of the tree with no event
// in the tree's directories, so no watch of the tree sees it.
func linkOutside(t *testing.T, target string) string {
	t.Helper()
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Link(target, alias); err != nil {
		t.Fatal(err)
	}
	return alias
}

// postHolds checks that task-N-post holds each of rels (slash-separated)
// as the tree under root holds it now, as who left it.
func postHolds(t *testing.T, snaps *snapshot.Repo, root string, task int, who string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		want, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		got, err := snaps.ReadFile(context.Background(), snapshot.TaskPost(task), rel)
		if err != nil || string(got) != string(want) {
			t.Errorf("task-%d-post holds %s as %q (%v), want %q as %s left it", task, rel, got, err, want, who)
		}
	}
}

// TestTaskStartTakesFilesFromTheSnapshotIndex: the task's first walk
// takes every file from the index the pre-task snapshot refreshed (no
// stat and no read of each), and asks git which directories it ignores
// as it goes instead of listing every ignored path first.
func TestTaskStartTakesFilesFromTheSnapshotIndex(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 40)
	log := testutil.LogGit(t)
	snaps, err := snapshot.Open(ctx, ws.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		return agent.Result{Final: "done"}, os.WriteFile(filepath.Join(req.Dir, ".ralph", "summary.md"), []byte("done\n"), 0o644)
	})
	opt := Options{Agent: a, Snapshots: snaps, Logger: logger, Limits: Limits{MaxIterations: 2}, Gates: []gate.Gate{gate.HasSummary{}}}
	out, err := New(ws, st, opt).Run(ctx, "change nothing")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	m := regexp.MustCompile(`took the files from the refreshed index.* files=(\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("the first walk did not take the files from the pre-task snapshot's index:\n%s", logs.String())
	}
	if n, _ := strconv.Atoi(m[1]); n < 40 {
		t.Errorf("the first walk took %d files from the index, want the 40 sources at least", n)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "ls-files") && strings.Contains(line, "--ignored") && !strings.Contains(line, " -- ") {
			t.Errorf("the first walk listed every ignored path before it started: %s", line)
		}
	}
}

// The pre-task snapshot may leave a few changed files unstaged in its
// index (snapshot.Repo.Unstaged): the first walk must not take their
// states from it. Here the user changed a file before the task and the
// agent's first iteration puts it back as the index has it; a Tracker
// that took the index's word would see no change, and the iteration's
// tree would keep the user's version.
func TestTaskStartExaminesTheFilesLeftUnstaged(t *testing.T) {
	ctx := context.Background()
	ws, st := newBenchWorkspace(t, 40)
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	snaps, err := snapshot.Open(ctx, ws.Root, logger)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snaps.Save(ctx, snapshot.Manual(time.Now()), "before"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws.Root, "src", "pkg0", "file0.go")
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package p\n\nvar Mine = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := agentFunc(func(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
		if req.Iteration == 1 {
			return agent.Result{ToolCalls: 1, Final: "put back"}, os.WriteFile(file, original, 0o644)
		}
		return agent.Result{Final: "done"}, os.WriteFile(filepath.Join(req.Dir, ".ralph", "summary.md"), []byte("done\n"), 0o644)
	})
	opt := Options{Agent: a, Snapshots: snaps, Logger: logger, Limits: Limits{MaxIterations: 3}, Gates: []gate.Gate{gate.HasSummary{}}}
	out, err := New(ws, st, opt).Run(ctx, "put the file back")
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != Completed {
		t.Fatalf("run ended %s: %s", out.Reason, out.Detail)
	}
	if !strings.Contains(logs.String(), "built the tree from the index's and the files git status named") {
		t.Fatalf("the pre-task snapshot staged the changed file; this test needs it left unstaged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "took the files from the refreshed index") {
		t.Fatalf("the first walk did not take the files from the pre-task snapshot's index:\n%s", logs.String())
	}
	its, err := st.Iterations(ctx, out.TaskID)
	if err != nil || len(its) == 0 {
		t.Fatalf("iterations = %d %v", len(its), err)
	}
	got, err := exec.Command("git", "-C", ws.Root, "cat-file", "blob", its[0].Tree+":src/pkg0/file0.go").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(original) {
		t.Errorf("iteration 1's tree holds file0.go as %q, want the agent's %q", got, original)
	}
}

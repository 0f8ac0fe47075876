package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

// parallelProject is a repository on main with six committed specs and
// scripts for the three roles. The implementer of spec n touches
// $MARKS/start-n, waits until $MARKS holds `until` start files (or, when
// $MARKS/stall exists, sleeps a minute, to be killed), then writes out/n.txt
// and commits "implement specs/000n-spec.md".
func parallelProject(t *testing.T, implementerWait string) string {
	t.Helper()
	dir := gitRepo(t)
	files := map[string]string{
		"ralph.toml": "[specs]\nbackoff = \"0s\"\n",
		"planner.json": `{"iterations": [{"actions": [
  {"tool": "prompt", "path": ".ralph/logs/prompt.md"},
  {"tool": "shell", "argv": ["sh", "-c", "p=$(sed -n 's/^- Plan file: //p' .ralph/logs/prompt.md) && mkdir -p \"$(dirname \"$p\")\" && printf '# Plan\\n\\n1. write the file\\n' > \"$p\""]}
], "final": "Planned.\n<promise>COMPLETE</promise>"}]}`,
		"implementer.json": `{"iterations": [{"actions": [
  {"tool": "prompt", "path": ".ralph/logs/prompt.md"},
  {"tool": "shell", "argv": ["sh", "impl.sh"]}
], "final": "Committed.\n<promise>COMPLETE</promise>"}]}`,
		"verifier.json": `{"iterations": [{"actions": [], "final": "Looks right.\n<promise>PASS</promise>"}]}`,
		"impl.sh": `set -e
s=$(sed -n 's/^- Spec: //p' .ralph/logs/prompt.md)
n=$(echo "$s" | sed 's/.*000\([0-9]\).*/\1/')
touch "$MARKS/start-$n"
` + implementerWait + `
mkdir -p out
echo "$s" > out/$n.txt
git add -A
git commit -qm "implement $s"
`,
	}
	for i := 1; i <= 6; i++ {
		files[fmt.Sprintf("specs/000%d-spec.md", i)] = fmt.Sprintf("# Spec %d\n\nWrite out/%d.txt.\n", i, i)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"checkout", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		gitIn(t, dir, args...)
	}
	marks := filepath.Join(t.TempDir(), "marks")
	if err := os.MkdirAll(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MARKS", marks)
	t.Setenv("GIT_AUTHOR_NAME", "ralph test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@ralph.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "ralph test")
	t.Setenv("GIT_COMMITTER_EMAIL", "test@ralph.invalid")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

var specsRunArgs = []string{"specs", "run", "--parallel", "3", "--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", "verifier.json"}

// implementerCalls reads the implementer calls from dir's store, checking
// its integrity.
func implementerCalls(t *testing.T, dir string) []store.SpecCall {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	calls, err := st.SpecCalls(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.SpecCall
	for _, c := range calls {
		if c.Role == "implementer" {
			out = append(out, c)
		}
	}
	return out
}

// maxConcurrent is the largest number of calls running at one instant.
func maxConcurrent(calls []store.SpecCall) int {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, c := range calls {
		edges = append(edges, edge{c.StartedAt, 1}, edge{c.EndedAt, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // an end before a start at the same instant
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.d
		most = max(most, n)
	}
	return most
}

// assertLanded checks main: linear, each spec's commit exactly once, no
// worktree or spec branch left.
func assertLanded(t *testing.T, dir string) {
	t.Helper()
	log := gitIn(t, dir, "log", "--format=%s", "main")
	subjects := strings.Split(log, "\n")
	for i := 1; i <= 6; i++ {
		want := fmt.Sprintf("implement specs/000%d-spec.md", i)
		if n := len(slices.DeleteFunc(slices.Clone(subjects), func(s string) bool { return s != want })); n != 1 {
			t.Errorf("spec %d's commit is on main %d times:\n%s", i, n, log)
		}
		if _, err := os.Stat(filepath.Join(dir, "specs", "done", fmt.Sprintf("000%d-spec.md", i))); err != nil {
			t.Errorf("spec %d not done: %v", i, err)
		}
	}
	if got := gitIn(t, dir, "rev-list", "--count", "main"); got != "7" {
		t.Errorf("main has %s commits, want 7:\n%s", got, log)
	}
	if merges := gitIn(t, dir, "rev-list", "--merges", "main"); merges != "" {
		t.Errorf("merge commits on main: %s", merges)
	}
	if wl := gitIn(t, dir, "worktree", "list"); strings.Count(wl, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", wl)
	}
	if br := gitIn(t, dir, "branch", "--list", "ralph/*"); br != "" {
		t.Errorf("branches left:\n%s", br)
	}
}

// Six specs, three at a time: the store's timestamps show the implementer
// calls running three at once, in two rounds, never four at once; every
// call is recorded with its spec's worktree.
func TestSpecsParallelOverlap(t *testing.T) {
	bin := buildRalph(t)
	// The first three implementers wait for each other, then the last three:
	// a run that is not three-wide never gets past the first wait.
	dir := parallelProject(t, `want=3; [ "$n" -gt 3 ] && want=6
i=0; until [ "$(ls "$MARKS" | wc -l)" -ge $want ]; do sleep 0.1; i=$((i+1)); [ $i -lt 300 ] || break; done`)
	res := runRalph(t, bin, dir, 3*time.Minute, specsRunArgs...)
	if res.code != 0 || !strings.Contains(res.out, "specs: 6 done, 0 failed, 0 skipped") {
		t.Fatalf("exit %d:\n%s", res.code, res.out)
	}
	assertLanded(t, dir)
	calls := implementerCalls(t, dir)
	if len(calls) != 6 {
		t.Fatalf("%d implementer calls, want 6: %+v", len(calls), calls)
	}
	if got := maxConcurrent(calls); got != 3 {
		t.Errorf("at most %d implementers ran at once, want 3", got)
	}
	for _, c := range calls {
		overlaps := 0
		for _, o := range calls {
			if o.ID != c.ID && o.StartedAt.Before(c.EndedAt) && c.StartedAt.Before(o.EndedAt) {
				overlaps++
			}
		}
		if overlaps < 2 {
			t.Errorf("%s's implementer overlapped %d others, want at least 2 (two rounds of three)", c.SpecID, overlaps)
		}
		want := filepath.Join(".ralph", "worktrees", strings.TrimSuffix(c.SpecID, ".md"))
		if !strings.HasSuffix(c.Worktree, want) {
			t.Errorf("%s ran in %q, want …/%s", c.SpecID, c.Worktree, want)
		}
	}
}

// kill -9 (or Ctrl-C) of ralph specs run --parallel 3 while three
// implementers run: the same command again ends the orphaned agents (after
// kill -9), resumes the three in their worktrees, runs the other three, and
// lands all six once each; the database passes PRAGMA integrity_check.
func TestSpecsParallelKillThenResume(t *testing.T) {
	bin := buildRalph(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) { killThenResume(t, bin, sig) })
	}
}

func killThenResume(t *testing.T, bin string, sig syscall.Signal) {
	dir := parallelProject(t, `[ -e "$MARKS/../resumed" ] || sleep 60`)
	marks := os.Getenv("MARKS")
	run := exec.Command(bin, specsRunArgs...)
	run.Dir = dir
	var out syncBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		entries, _ := os.ReadDir(marks)
		if len(entries) == 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			t.Fatalf("three implementers never ran at once:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := run.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := run.Wait()
	if sig == syscall.SIGINT {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(out.String(), "interrupted (run ralph specs run again to resume)") {
			t.Fatalf("Ctrl-C: %v\n%s", err, out.String())
		}
	}
	if got := gitIn(t, dir, "rev-list", "--count", "main"); got != "1" {
		t.Fatalf("something landed before the kill: %s commits", got)
	}
	wts := gitIn(t, dir, "worktree", "list")
	if n := strings.Count(wts, "/.ralph/worktrees/"); n != 3 {
		t.Fatalf("%d worktrees after the kill, want 3:\n%s", n, wts)
	}
	if err := os.WriteFile(filepath.Join(marks, "..", "resumed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	res := runRalph(t, bin, dir, 3*time.Minute, specsRunArgs...)
	if res.code != 0 || !strings.Contains(res.out, "specs: 6 done, 0 failed, 0 skipped") {
		t.Fatalf("rerun: exit %d:\n%s\nfirst run:\n%s", res.code, res.out, out.String())
	}
	for _, n := range []string{"0001", "0002", "0003"} {
		if !strings.Contains(res.out, n+"-spec.md: implementing (attempt 2)") {
			t.Errorf("spec %s did not resume at its second implementation:\n%s", n, res.out)
		}
		if strings.Contains(res.out, n+"-spec.md: planning") {
			t.Errorf("spec %s was planned again:\n%s", n, res.out)
		}
	}
	assertLanded(t, dir)
	calls := implementerCalls(t, dir)
	if len(calls) != 9 {
		t.Errorf("%d implementer calls, want 9 (3 cut short, 6 finished)", len(calls))
	}
	if left, _ := os.ReadDir(filepath.Join(dir, ".ralph", "worktrees")); len(left) != 0 {
		t.Errorf("worktree folders left: %v", left)
	}
}

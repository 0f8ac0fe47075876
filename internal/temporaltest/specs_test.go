package temporaltest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The spec scripts name their spec from the worktree's branch
// (ralph/spec/<id>); the implementer takes a few seconds, so a worker can
// be killed while it runs.
var specFiles = map[string]string{
	"tools/plan.sh": `id=$(git rev-parse --abbrev-ref HEAD); id=${id#ralph/spec/}
mkdir -p specs/plans
printf '# Plan: %s\n\n1. write out/%s.txt\n' "$id" "$id" > "specs/plans/$id.md"
`,
	"tools/impl.sh": `id=$(git rev-parse --abbrev-ref HEAD); id=${id#ralph/spec/}
sleep 3
mkdir -p out
echo "$id" > "out/$id.txt"
git add -A && git commit -qm "implement $id"
`,
	"planner.json":     `{"iterations": [{"actions": [{"tool": "shell", "argv": ["sh", "tools/plan.sh"]}], "final": "Planned.\n<promise>COMPLETE</promise>"}]}`,
	"implementer.json": `{"iterations": [{"actions": [{"tool": "shell", "argv": ["sh", "tools/impl.sh"]}], "final": "Committed.\n<promise>COMPLETE</promise>"}]}`,
	"verifier.json":    `{"iterations": [{"actions": [], "final": "Looks right.\n<promise>PASS</promise>"}]}`,
	"specs/0001-a.md":  "# A\n\nWrite out/0001-a.txt.\n",
	"specs/0002-b.md":  "# B\n\nWrite out/0002-b.txt.\n",
	"specs/0003-c.md":  "# C\n\nWrite out/0003-c.txt.\n",
	"specs/0004-d.md":  "# D\n\nWrite out/0004-d.txt.\n",
}

var specIDs = []string{"0001-a", "0002-b", "0003-c", "0004-d"}

// implementing finds the step worktree in a worker's cache that runs an
// implementer now (its log is open and the spec's file not written yet).
// It returns the spec id.
func implementing(cache string) string {
	dirs, _ := filepath.Glob(filepath.Join(cache, "worktrees", "*", "step-*"))
	for _, d := range dirs {
		logs, _ := filepath.Glob(filepath.Join(d, ".ralph", "logs", "specs", "runs", "*", "*", "impl-attempt-*.log"))
		for _, l := range logs {
			id := filepath.Base(filepath.Dir(filepath.Dir(l)))
			if _, err := os.Stat(filepath.Join(d, "out", id+".txt")); err != nil {
				return id
			}
		}
	}
	return ""
}

// Four specs run across two real workers against a bare remote, each
// step (plan, implement, verify) an activity of its own. One worker is
// killed with SIGKILL while an implementer runs, after it finished an
// implement step of another spec: the step times out on heartbeat and is
// retried on the other worker from the same head. The submitter is killed
// too and rerun: the rerun attaches to the four workflows instead of
// starting new ones, and every spec lands exactly once, the one the killed
// worker implemented first included.
func TestSpecsAcrossWorkersSurviveKill(t *testing.T) {
	c := newCluster(t)
	work := repo(t, specFiles)
	a, cacheA := worker(t, c, "worker-a", 1)
	worker(t, c, "worker-b", 1)

	specsArgs := append([]string{"specs", "run"}, c.args()...)
	specsArgs = append(specsArgs, "--heartbeat-timeout", "3s", "--agent", "script",
		"--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", "verifier.json")
	first := start(t, work, specsArgs...)
	eventually(t, 60*time.Second, "the first submitter to start the four workflows", func() bool {
		return strings.Count(first.Output(), "started workflow") == 4
	})
	// Kill worker-a once it has implemented one spec and is implementing
	// another.
	var killed string
	var doneOnA []string
	eventually(t, 90*time.Second, "worker-a to implement its second spec", func() bool {
		doneOnA, _ = filepath.Glob(filepath.Join(cacheA, "runs", "*", "*-implement"))
		if len(doneOnA) < 1 {
			return false
		}
		killed = implementing(cacheA)
		return killed != ""
	})
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.wait(t, 10*time.Second)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.wait(t, 10*time.Second)

	again := start(t, work, specsArgs...)
	if code := again.wait(t, 120*time.Second); code != 0 {
		t.Fatalf("rerun exit %d:\n%s", code, again.Output())
	}
	out := again.Output()
	if n := strings.Count(out, "attached to workflow"); n != 4 {
		t.Errorf("the rerun attached to %d workflows, want 4:\n%s", n, out)
	}
	if strings.Contains(out, "started workflow") {
		t.Errorf("the rerun started a workflow:\n%s", out)
	}
	if !strings.Contains(out, killed+": landed ralph/spec/"+killed+" from worker-b") {
		t.Errorf("spec %s, whose worker was killed, did not land from worker-b:\n%s", killed, out)
	}
	// What worker-a implemented before it died landed: the spec of its
	// finished implement step has its commit in the checkout (below), made
	// in that step, whose transcript is in worker-a's runs/.
	implLog, _ := filepath.Glob(filepath.Join(doneOnA[0], "logs", "specs", "runs", "*", "*", "impl-attempt-1.log"))
	if len(implLog) != 1 {
		t.Fatalf("worker-a's implement transcript: %v", implLog)
	}
	implementedOnA := filepath.Base(filepath.Dir(filepath.Dir(implLog[0])))
	if implementedOnA == killed || !strings.Contains(out, implementedOnA+": landed ralph/spec/"+implementedOnA) {
		t.Errorf("spec %s, implemented on worker-a, did not land (killed %s):\n%s", implementedOnA, killed, out)
	}
	// Every spec landed once: one implementation commit each, its file and
	// its done marker in the checkout.
	log := run(t, work, "git", "log", "--format=%s")
	for _, id := range specIDs {
		if n := strings.Count(log, "implement "+id+"\n"); n != 1 {
			t.Errorf("%d commits implement %s, want 1:\n%s", n, id, log)
		}
		for _, f := range []string{"out/" + id + ".txt", "specs/done/" + id + ".md"} {
			if _, err := os.Stat(filepath.Join(work, f)); err != nil {
				t.Errorf("%s did not land: %v", f, err)
			}
		}
	}
	refs := run(t, work, "git", "ls-remote", "origin", "refs/heads/ralph/spec/*")
	for _, id := range specIDs {
		if !strings.Contains(refs, "refs/heads/ralph/spec/"+id+"\n") {
			t.Errorf("branch ralph/spec/%s was not pushed:\n%s", id, refs)
		}
	}
	if st := run(t, work, "git", "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("the checkout is not clean after landing:\n%s", st)
	}
}

// A spec whose workflow ended in failure is started again by the next
// ralph specs run --temporal (one that succeeded is only attached to), and
// ralph specs status --temporal shows each spec's workflow.
func TestFailedSpecStartsAgain(t *testing.T) {
	c := newCluster(t)
	files := map[string]string{"specs/0001-a.md": specFiles["specs/0001-a.md"],
		"fail.json": `{"iterations": [{"actions": [], "final": "Wrong.\n<promise>FAIL</promise>"}]}`}
	for _, f := range []string{"tools/plan.sh", "tools/impl.sh", "planner.json", "implementer.json", "verifier.json"} {
		files[f] = specFiles[f]
	}
	work := repo(t, files)
	worker(t, c, "worker-a", 1)
	specsArgs := func(verifier string) []string {
		a := append([]string{"specs", "run"}, c.args()...)
		return append(a, "--agent", "script", "--max-attempts", "1",
			"--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", verifier)
	}
	failing := start(t, work, specsArgs("fail.json")...)
	if code := failing.wait(t, 90*time.Second); code != 1 {
		t.Fatalf("a failing spec: exit %d, want 1:\n%s", code, failing.Output())
	}
	status := append([]string{"specs", "status"}, c.args()...)
	if out := run(t, work, ralphBin, status...); !strings.Contains(out, "0001-a: ended on worker-a with exit code 1") {
		t.Errorf("specs status --temporal after the failure:\n%s", out)
	}
	passing := start(t, work, specsArgs("verifier.json")...)
	if code := passing.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("the rerun: exit %d:\n%s", code, passing.Output())
	}
	out := passing.Output()
	if !strings.Contains(out, "0001-a: started workflow") || !strings.Contains(out, "0001-a: landed ralph/spec/0001-a from worker-a") {
		t.Errorf("the rerun did not start the failed spec again and land it:\n%s", out)
	}
	if out := run(t, work, ralphBin, status...); !strings.Contains(out, "0001-a: ended on worker-a with exit code 0") {
		t.Errorf("specs status --temporal after the rerun:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(work, "out", "0001-a.txt")); err != nil {
		t.Errorf("the spec's work did not land: %v", err)
	}
}

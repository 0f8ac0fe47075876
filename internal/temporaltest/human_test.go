package temporaltest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var humanFiles = map[string]string{
	"agent.json": `{"iterations": [
  {"actions": [{"tool": "shell", "argv": ["cp", "plan.tsx", ".ralph/plan.tsx"]}], "final": "planned"},
  {"actions": [{"tool": "write", "path": "step1.txt", "content": "1"}, {"tool": "write", "path": ".ralph/summary.md", "content": "Built\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"},
  {"actions": [{"tool": "write", "path": "step2.txt", "content": "2"}, {"tool": "write", "path": ".ralph/summary.md", "content": "Deployed\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
]}`,
	"plan.tsx": `<Plan name="deploy">
  <Phase name="Build">
    <Step name="Make">Write step1.txt</Step>
  </Phase>
  <Phase name="Release">
    <Human message="Deploy to prod?" timeout="120s" />
    <Step name="Deploy">Write step2.txt</Step>
  </Phase>
</Plan>
`,
}

var branchRE = regexp.MustCompile(`branch (ralph/task/[0-9a-f]+) pushed`)

// A <Human> in a task's orchestration plan, running on a worker, is
// answered from a third process through a workflow signal: approved, the
// workflow continues to the next step; rejected, it follows onReject
// (stop: the task ends as rejected, exit 9).
func TestHumanAnswerIsASignal(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 2)
	for _, tc := range []struct {
		answer string
		code   int
	}{{"approve", 0}, {"reject", 9}} {
		t.Run(tc.answer, func(t *testing.T) {
			work := repo(t, humanFiles)
			runArgs := append([]string{"run"}, c.args()...)
			runArgs = append(runArgs, "--agent", "script", "--script", "agent.json", "ship it")
			sub := start(t, work, runArgs...)
			pending := append([]string{"pending"}, c.args()...)
			eventually(t, 90*time.Second, "the <Human> request to be pending", func() bool {
				out, _ := runQuiet(work, ralphBin, pending...)
				return strings.Contains(out, "Deploy to prod?")
			})
			st := run(t, work, ralphBin, append([]string{"status"}, c.args()...)...)
			if !strings.Contains(st, "waiting for a human: request 1: Deploy to prod?") || !strings.Contains(st, "on worker-a") {
				t.Errorf("status while waiting:\n%s", st)
			}
			if tc.answer == "approve" {
				// The submitter goes away; the workflow does not, and
				// ralph resume --temporal follows it again.
				if err := sub.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				sub.wait(t, 10*time.Second)
			}
			ansDir, ansArgs := work, append(append([]string{tc.answer}, c.args()...), "1")
			if tc.answer == "reject" {
				// From outside any repository, naming the workflow: the
				// cluster is all the answer needs.
				m := workflowRE.FindStringSubmatch(sub.Output())
				if m == nil {
					t.Fatalf("no workflow id in the submitter's output:\n%s", sub.Output())
				}
				ansDir = t.TempDir()
				ansArgs = append(append([]string{tc.answer}, c.args()...), "--workflow", m[1], "1")
			}
			ans := run(t, ansDir, ralphBin, ansArgs...)
			if !strings.Contains(ans, "request 1 of workflow ralph-task-") {
				t.Errorf("%s said:\n%s", tc.answer, ans)
			}
			if tc.answer == "approve" {
				sub = start(t, work, append([]string{"resume"}, c.args()...)...)
			}
			if code := sub.wait(t, 90*time.Second); code != tc.code {
				t.Fatalf("ralph run --temporal exit %d, want %d:\n%s", code, tc.code, sub.Output())
			}
			out := sub.Output()
			if !strings.Contains(out, "task ended on worker-a with exit code "+itoa(tc.code)) {
				t.Errorf("submitter output:\n%s", out)
			}
			if tc.code != 0 {
				if branchRE.MatchString(out) {
					t.Errorf("a rejected task pushed a branch:\n%s", out)
				}
				return
			}
			m := branchRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no branch pushed:\n%s", out)
			}
			run(t, work, "git", "fetch", "-q", "origin", m[1])
			if got := run(t, work, "git", "show", "FETCH_HEAD:step2.txt"); got != "2" {
				t.Errorf("step2.txt on %s = %q, want the step after the approval", m[1], got)
			}
			if files := run(t, work, "git", "diff", "--name-only", "HEAD", "FETCH_HEAD"); strings.Contains(files, ".ralph/") {
				t.Errorf("the task branch carries ralph's own files:\n%s", files)
			}
			// The completed task landed on the checkout's branch.
			if !strings.Contains(out, "landed "+m[1]) {
				t.Errorf("the task did not land:\n%s", out)
			}
			if got, err := os.ReadFile(filepath.Join(work, "step2.txt")); err != nil || string(got) != "2" {
				t.Errorf("step2.txt in the checkout = %q, %v", got, err)
			}
			if st := run(t, work, ralphBin, append([]string{"status"}, c.args()...)...); !strings.Contains(st, "ended on worker-a with exit code 0") {
				t.Errorf("status after the run:\n%s", st)
			}
			// Following the ended workflow again does not land it twice.
			head := run(t, work, "git", "rev-parse", "HEAD")
			again := run(t, work, ralphBin, append([]string{"resume"}, c.args()...)...)
			if !strings.Contains(again, m[1]+" already landed here") || strings.Contains(again, "landed "+m[1]) {
				t.Errorf("ralph resume after the landing:\n%s", again)
			}
			if got := run(t, work, "git", "rev-parse", "HEAD"); got != head {
				t.Errorf("HEAD moved from %s to %s", head, got)
			}
		})
	}
}

// `ralph stop --temporal` from another process is a signal: the run on
// the worker stops after its current iteration and the task ends as
// stopped (exit 8).
func TestStopIsASignal(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	work := repo(t, map[string]string{
		"slow.json": slowScript(40),
	})
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "slow.json", "--max-iterations", "500", "count forever")
	sub := start(t, work, runArgs...)
	eventually(t, 90*time.Second, "the run to reach its third iteration", func() bool {
		return strings.Contains(sub.Output(), "iteration 3")
	})
	out := run(t, work, ralphBin, append(append([]string{"stop"}, c.args()...), "--reason", "enough")...)
	if !strings.Contains(out, "stop requested; workflow ralph-task-") {
		t.Errorf("stop said:\n%s", out)
	}
	if code := sub.wait(t, 60*time.Second); code != 8 {
		t.Fatalf("ralph run --temporal exit %d, want 8 (stopped):\n%s", code, sub.Output())
	}
	// The stopped task pushed nothing, and status says so rather than
	// naming its branch "at" no commit.
	if st := run(t, work, ralphBin, append([]string{"status"}, c.args()...)...); !strings.Contains(st, "stop requested: enough") ||
		!strings.Contains(st, "; nothing pushed; transcript worker-a:") || strings.Contains(st, " at ;") {
		t.Errorf("status after the stop:\n%s", st)
	}
}

// slowScript is n iterations that each take a second and change a file.
func slowScript(n int) string {
	var its []string
	for i := 1; i <= n; i++ {
		its = append(its, fmt.Sprintf(`{"actions": [{"tool": "shell", "argv": ["sleep", "1"]}, {"tool": "write", "path": "f%d.txt", "content": "%d"}], "final": "step %d"}`, i, i, i))
	}
	return `{"iterations": [` + strings.Join(its, ",\n") + `]}`
}

var workflowRE = regexp.MustCompile(`started workflow (ralph-task-[0-9a-f]+)`)

// Cancelling the workflow cancels the attempt on the worker: the run's
// whole process group ends (the agent's files stop changing) and the
// worker takes the next job.
func TestCancelEndsTheRun(t *testing.T) {
	c := newCluster(t)
	wa, cache := worker(t, c, "worker-a", 1)
	work := repo(t, map[string]string{"slow.json": slowScript(40)})
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "slow.json", "--max-iterations", "500", "count forever")
	sub := start(t, work, runArgs...)
	eventually(t, 90*time.Second, "the run to reach its third iteration", func() bool {
		return strings.Contains(sub.Output(), "iteration 3")
	})
	m := workflowRE.FindStringSubmatch(sub.Output())
	if m == nil {
		t.Fatalf("no workflow id:\n%s", sub.Output())
	}
	if err := c.ts.GetDefaultClient().CancelWorkflow(context.Background(), m[1], ""); err != nil {
		t.Fatal(err)
	}
	if code := sub.wait(t, 60*time.Second); code == 0 {
		t.Fatalf("ralph run --temporal succeeded after a cancel:\n%s", sub.Output())
	}
	wt := filepath.Join(cache, "worktrees", m[1], "attempt-1")
	count := func() int {
		files, _ := filepath.Glob(filepath.Join(wt, "f*.txt"))
		return len(files)
	}
	// An iteration takes a second: three seconds without a new file means
	// nothing runs the script any more.
	before := count()
	time.Sleep(3 * time.Second)
	if after := count(); after != before || before == 0 {
		t.Errorf("the agent wrote %d files before the cancel and %d three seconds after", before, after)
	}
	// The worker is free for the next job.
	next := append([]string{"run"}, c.args()...)
	next = append(next, "--agent", "script", "--script", "slow.json", "--max-iterations", "2", "two iterations")
	again := start(t, work, next...)
	if code := again.wait(t, 60*time.Second); code != 3 {
		t.Errorf("the next task exit %d, want 3 (max-iterations):\n%s", code, again.Output())
	}
	// The cancelled task's worktree stayed for a look; a worker on the
	// same cache removes it, its workflow having ended.
	if _, err := os.Stat(wt); err != nil {
		t.Fatalf("the cancelled task's worktree: %v", err)
	}
	if err := wa.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wa.wait(t, 30*time.Second)
	start(t, t.TempDir(), append(append([]string{"worker"}, c.args()...), "--identity", "worker-b", "--cache", cache)...)
	eventually(t, 30*time.Second, "the ended workflow's worktree to go", func() bool {
		_, err := os.Stat(filepath.Dir(wt))
		return os.IsNotExist(err)
	})
}

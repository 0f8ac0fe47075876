package temporaltest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var specWorkflowRE = regexp.MustCompile(`0001-a: started workflow (\S+)`)

// A <Human> in a spec's orchestration plan, running on a worker, is
// answered from a third process through the spec workflow's signal:
// approved, the implementer runs and the spec lands; rejected (onReject
// stop), the spec fails on the worker without implementing and nothing
// lands. While the person thinks no activity runs and the worker holds no
// worktree; the answer starts the next step.
func TestSpecHumanAnswerIsASignal(t *testing.T) {
	c := newCluster(t)
	_, cache := worker(t, c, "worker-a", 2)
	cl := c.ts.GetDefaultClient()
	for _, tc := range []struct {
		answer string
		code   int
		steps  int // implement (waits), implement, verify
	}{{"approve", 0, 3}, {"reject", 1, 2}} {
		t.Run(tc.answer, func(t *testing.T) {
			files := map[string]string{
				"specs/0001-a.md": specFiles["specs/0001-a.md"],
				"specs/plans/0001-a.md": `<Plan name="a">
  <Human message="Write out/0001-a.txt?" timeout="120s" />
  <Step name="write">Write out/0001-a.txt.</Step>
</Plan>
`,
			}
			for _, f := range []string{"tools/impl.sh", "planner.json", "implementer.json", "verifier.json"} {
				files[f] = specFiles[f]
			}
			work := repo(t, files)
			args := append([]string{"specs", "run"}, c.args()...)
			args = append(args, "--agent", "script", "--max-attempts", "1",
				"--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", "verifier.json")
			sub := start(t, work, args...)
			var id string
			eventually(t, 60*time.Second, "the spec's workflow to start", func() bool {
				m := specWorkflowRE.FindStringSubmatch(sub.Output())
				if m != nil {
					id = m[1]
				}
				return m != nil
			})
			pending := append(append([]string{"pending"}, c.args()...), "--workflow", id)
			eventually(t, 90*time.Second, "the spec's <Human> request to be pending", func() bool {
				out, _ := runQuiet(work, ralphBin, pending...)
				return strings.Contains(out, "Write out/0001-a.txt?")
			})
			d, err := cl.DescribeWorkflowExecution(context.Background(), id, "")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(d.GetPendingActivities()); n != 0 {
				t.Errorf("%d activities pending while the spec waits for a person", n)
			}
			if left, _ := filepath.Glob(filepath.Join(cache, "worktrees", "*")); len(left) != 0 {
				t.Errorf("the worker holds worktrees while the spec waits for a person: %v", left)
			}
			if n := stepsScheduled(history(t, cl, id)); n != 1 {
				t.Errorf("%d steps scheduled before the answer, want the one that found the <Human>", n)
			}
			status := run(t, work, ralphBin, append([]string{"specs", "status"}, c.args()...)...)
			if !strings.Contains(status, "0001-a: step 1 no activity running · spec waiting") || !strings.Contains(status, "waiting for a human: request 1: Write out/0001-a.txt?") {
				t.Errorf("specs status --temporal while waiting:\n%s", status)
			}
			ans := run(t, work, ralphBin, append(append([]string{tc.answer}, c.args()...), "--workflow", id, "1")...)
			if !strings.Contains(ans, "request 1 of workflow "+id) {
				t.Errorf("%s said:\n%s", tc.answer, ans)
			}
			code := sub.wait(t, 90*time.Second)
			out := sub.Output()
			// The answer is a signal, then the step runs again.
			events := history(t, cl, id)
			if n := stepsScheduled(events); n != tc.steps {
				t.Errorf("%d steps scheduled, want %d", n, tc.steps)
			}
			signalled, scheduled := 0, 0
			for _, e := range events {
				if e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == "human-answer" && signalled == 0 {
					signalled = scheduled
				}
				if e.GetActivityTaskScheduledEventAttributes() != nil {
					scheduled++
				}
			}
			if signalled != 1 {
				t.Errorf("the answer arrived after %d steps were scheduled, want 1", signalled)
			}
			if code != tc.code {
				t.Fatalf("ralph specs run --temporal exit %d, want %d:\n%s", code, tc.code, out)
			}
			_, err = os.Stat(filepath.Join(work, "out", "0001-a.txt"))
			if tc.code == 0 {
				if !strings.Contains(out, "0001-a: landed ralph/spec/0001-a from worker-a") || err != nil {
					t.Errorf("the approved spec did not land (%v):\n%s", err, out)
				}
				return
			}
			if !strings.Contains(out, "0001-a: failed on worker-a (exit 1)") || err == nil {
				t.Errorf("the rejected spec did not fail without its work (%v):\n%s", err, out)
			}
			if log := run(t, work, "git", "log", "--all", "--format=%s"); strings.Contains(log, "implement 0001-a") {
				t.Errorf("the implementer ran after the rejection:\n%s", log)
			}
		})
	}
}

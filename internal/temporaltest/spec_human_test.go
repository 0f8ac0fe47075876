package temporaltest

import (
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
// lands.
func TestSpecHumanAnswerIsASignal(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 2)
	for _, tc := range []struct {
		answer string
		code   int
	}{{"approve", 0}, {"reject", 1}} {
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
			ans := run(t, work, ralphBin, append(append([]string{tc.answer}, c.args()...), "--workflow", id, "1")...)
			if !strings.Contains(ans, "request 1 of workflow "+id) {
				t.Errorf("%s said:\n%s", tc.answer, ans)
			}
			code := sub.wait(t, 90*time.Second)
			out := sub.Output()
			if code != tc.code {
				t.Fatalf("ralph specs run --temporal exit %d, want %d:\n%s", code, tc.code, out)
			}
			_, err := os.Stat(filepath.Join(work, "out", "0001-a.txt"))
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

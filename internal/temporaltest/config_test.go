package temporaltest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With [temporal] address in ralph.toml (committed, as a team shares it)
// and no --temporal flag anywhere: ralph run submits the task and says
// so, ralph status, pending and approve follow its workflow, ralph stop
// stops the one that runs; the worker runs its task locally although it
// sees the same ralph.toml.
func TestConfigAddressAloneFollowsTheWorkflows(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	files := maps.Clone(humanFiles)
	files["slow.json"] = slowScript(40)
	work := repo(t, files)
	toml := filepath.Join(work, "ralph.toml")
	data, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, fmt.Sprintf("\n[temporal]\naddress = %q\nnamespace = %q\n", c.addr, c.ns)...)
	if err := os.WriteFile(toml, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, work, "git", "commit", "-qam", "temporal address")
	run(t, work, "git", "push", "-q", "origin", "main")

	sub := start(t, work, "run", "--agent", "script", "--script", "agent.json", "ship it")
	eventually(t, 60*time.Second, "the task's workflow to start", func() bool {
		return strings.Contains(sub.Output(), "started workflow")
	})
	if out := sub.Output(); !strings.Contains(out, "ralph: submitting to Temporal at "+c.addr+" ([temporal] address in ralph.toml); --local runs it here") {
		t.Errorf("ralph run does not say it submits:\n%s", out)
	}
	eventually(t, 90*time.Second, "ralph pending to list the <Human> request", func() bool {
		out, _ := runQuiet(work, ralphBin, "pending")
		return strings.Contains(out, "Deploy to prod?")
	})
	st := run(t, work, ralphBin, "status")
	if !strings.Contains(st, "waiting for a human: request 1: Deploy to prod?") || !strings.Contains(st, "on worker-a") || strings.Contains(st, "local store") {
		t.Errorf("ralph status while waiting:\n%s", st)
	}
	if ans := run(t, work, ralphBin, "approve", "1"); !strings.Contains(ans, "approved request 1 of workflow ralph-task-") {
		t.Errorf("ralph approve said:\n%s", ans)
	}
	if code := sub.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("ralph run exit %d after the approval:\n%s", code, sub.Output())
	}
	if out := sub.Output(); !strings.Contains(out, "task ended on worker-a with exit code 0") || !strings.Contains(out, "landed ralph/task/") {
		t.Errorf("ralph run's output:\n%s", out)
	}
	if st := run(t, work, ralphBin, "status"); !strings.Contains(st, "ended on worker-a with exit code 0") {
		t.Errorf("ralph status after the run:\n%s", st)
	}

	// A second task runs on; ralph stop stops it (the ended one is not
	// asked) and it ends as stopped.
	slow := start(t, work, "run", "--agent", "script", "--script", "slow.json", "--max-iterations", "500", "count forever")
	eventually(t, 90*time.Second, "the run to reach its third iteration", func() bool {
		return strings.Contains(slow.Output(), "iteration 3")
	})
	m := workflowRE.FindStringSubmatch(slow.Output())
	if m == nil {
		t.Fatalf("no workflow id:\n%s", slow.Output())
	}
	out := run(t, work, ralphBin, "stop", "--reason", "enough")
	if strings.TrimSpace(out) != "stop requested; workflow "+m[1]+" stops after its current iteration (a spec: its current step)" {
		t.Errorf("ralph stop said:\n%s", out)
	}
	if code := slow.wait(t, 60*time.Second); code != 8 {
		t.Fatalf("the second task exit %d, want 8 (stopped):\n%s", code, slow.Output())
	}
	st = run(t, work, ralphBin, "status")
	if !strings.Contains(st, "workflow "+m[1]) || !strings.Contains(st, "stop requested: enough") {
		t.Errorf("ralph status after the stop:\n%s", st)
	}
	// --local reads this checkout's own store: no task ran here.
	if out, err := runQuiet(work, ralphBin, "status", "--local"); strings.Contains(out, "workflow ralph-task-") {
		t.Errorf("ralph status --local shows the workflows (%v):\n%s", err, out)
	}
	// A task run here since is the newer run: status follows it, and
	// says why.
	local := start(t, work, "run", "--local", "--agent", "script", "--script", "slow.json", "--max-iterations", "1", "one here")
	if code := local.wait(t, 60*time.Second); code != 3 {
		t.Fatalf("ralph run --local exit %d, want 3 (max-iterations):\n%s", code, local.Output())
	}
	if out := local.Output(); strings.Contains(out, "Temporal") || strings.Contains(out, "workflow") {
		t.Errorf("ralph run --local went to Temporal:\n%s", out)
	}
	out, _ = runQuiet(work, ralphBin, "status")
	if !strings.Contains(out, "task 1 ran here (--local) after this workspace's last Temporal workflow: using the local store") ||
		!strings.Contains(out, "one here") || strings.Contains(out, "workflow ralph-task-") {
		t.Errorf("ralph status after a local task:\n%s", out)
	}
}

// The spec workflows ralph specs run submits through ralph.toml's
// address are recorded too: ralph pending, approve and status find the
// spec's <Human> request and workflow with no flag.
func TestConfigAddressAloneFollowsSpecWorkflows(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	files := map[string]string{
		"specs/0001-a.md": specFiles["specs/0001-a.md"],
		"specs/plans/0001-a.md": `<Plan name="a">
  <Human message="Write out/0001-a.txt?" timeout="120s" />
  <Step name="write">Write out/0001-a.txt.</Step>
</Plan>
`,
		"ralph.toml": fmt.Sprintf("[temporal]\naddress = %q\nnamespace = %q\n", c.addr, c.ns),
	}
	for _, f := range []string{"tools/impl.sh", "planner.json", "implementer.json", "verifier.json"} {
		files[f] = specFiles[f]
	}
	work := repo(t, files)
	sub := start(t, work, "specs", "run", "--agent", "script", "--max-attempts", "1",
		"--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", "verifier.json")
	var id string
	eventually(t, 60*time.Second, "the spec's workflow to start", func() bool {
		m := specWorkflowRE.FindStringSubmatch(sub.Output())
		if m != nil {
			id = m[1]
		}
		return m != nil
	})
	eventually(t, 90*time.Second, "ralph pending to list the spec's <Human> request", func() bool {
		out, _ := runQuiet(work, ralphBin, "pending")
		return strings.Contains(out, "Write out/0001-a.txt?")
	})
	if st := run(t, work, ralphBin, "status"); !strings.Contains(st, "workflow "+id+" (spec 0001-a)") || !strings.Contains(st, "waiting for a human") {
		t.Errorf("ralph status while the spec waits:\n%s", st)
	}
	if ans := run(t, work, ralphBin, "approve", "1"); !strings.Contains(ans, "approved request 1 of workflow "+id) {
		t.Errorf("ralph approve said:\n%s", ans)
	}
	if code := sub.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("ralph specs run exit %d:\n%s", code, sub.Output())
	}
	if out := sub.Output(); !strings.Contains(out, "0001-a: landed ralph/spec/0001-a from worker-a") {
		t.Errorf("the spec did not land:\n%s", out)
	}
	if st := run(t, work, ralphBin, "status"); !strings.Contains(st, "ended on worker-a with exit code 0") {
		t.Errorf("ralph status after the spec:\n%s", st)
	}
}

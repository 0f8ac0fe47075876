package temporaltest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// history returns a workflow's events.
func history(t *testing.T, c client.Client, id string) []*historypb.HistoryEvent {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// stepsScheduled counts the ralph.SpecStep activities a history schedules.
func stepsScheduled(events []*historypb.HistoryEvent) int {
	n := 0
	for _, e := range events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ralph.SpecStep" {
			n++
		}
	}
	return n
}

var eventsRE = regexp.MustCompile(`attempt 1 on worker-a · implementer · iteration 1 · [1-9][0-9]* events`)

// A spec's workflow runs one activity per agent call. Its verifier fails
// once: the workflow counts the failure, waits the backoff on a timer and
// runs implement again, whose prompt carries the verifier's report; then
// verify passes. After the spec lands the worker's cache holds no
// worktree, and each step's transcript (store and logs) under runs/.
func TestSpecStepsAreActivities(t *testing.T) {
	c := newCluster(t)
	files := map[string]string{
		"ralph.toml":      "[specs]\nbackoff = \"1s\"\n",
		"specs/0001-a.md": specFiles["specs/0001-a.md"],
		"tools/plan.sh":   specFiles["tools/plan.sh"],
		"tools/impl.sh": `id=$(git rev-parse --abbrev-ref HEAD); id=${id#ralph/spec/}
sleep 4
mkdir -p out
date +%s%N >> "out/$id.txt"
git add -A && git commit -qm "implement $id"
`,
		"planner.json":     specFiles["planner.json"],
		"implementer.json": `{"iterations": [{"actions": [{"tool": "shell", "argv": ["sh", "tools/impl.sh"]}], "final": "Committed.\n<promise>COMPLETE</promise>"}, {"actions": [{"tool": "shell", "argv": ["sh", "tools/impl.sh"]}], "final": "Committed again.\n<promise>COMPLETE</promise>"}]}`,
		"verifier.json":    `{"iterations": [{"actions": [], "final": "out/0001-a.txt needs a second line.\n<promise>FAIL</promise>"}, {"actions": [], "final": "Looks right.\n<promise>PASS</promise>"}]}`,
	}
	work := repo(t, files)
	_, cache := worker(t, c, "worker-a", 2)
	args := append([]string{"specs", "run"}, c.args()...)
	args = append(args, "--agent", "script", "--planner-script", "planner.json", "--implementer-script", "implementer.json", "--verifier-script", "verifier.json")
	sub := start(t, work, args...)
	if code := sub.wait(t, 120*time.Second); code != 0 {
		t.Fatalf("ralph specs run --temporal exit %d:\n%s", code, sub.Output())
	}
	out := sub.Output()
	m := specWorkflowRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no workflow id:\n%s", out)
	}
	id := m[1]
	if !strings.Contains(out, "0001-a: landed ralph/spec/0001-a from worker-a; transcript worker-a:"+filepath.Join(cache, "runs", id, "5-verify")) {
		t.Errorf("the spec did not land with its last step's transcript:\n%s", out)
	}
	if !eventsRE.MatchString(out) {
		t.Errorf("no progress line shows the implementer's events:\n%s", out)
	}

	// One activity per agent call: plan, implement, verify, implement,
	// verify; the retry waited on a timer.
	events := history(t, c.ts.GetDefaultClient(), id)
	if n := stepsScheduled(events); n != 5 {
		t.Errorf("%d ralph.SpecStep activities scheduled, want 5 (plan, implement, verify, implement, verify)", n)
	}
	timers := 0
	for _, e := range events {
		if e.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED {
			timers++
		}
	}
	if timers != 1 {
		t.Errorf("%d timers started, want the one backoff", timers)
	}

	// Each step's transcript is under runs/, and the worktrees are gone.
	runs := filepath.Join(cache, "runs", id)
	for _, step := range []string{"1-plan", "2-implement", "3-verify", "4-implement", "5-verify"} {
		if _, err := os.Stat(filepath.Join(runs, step, "ralph.db")); err != nil {
			t.Errorf("step %s's store: %v", step, err)
		}
	}
	if all, _ := os.ReadDir(runs); len(all) != 5 {
		t.Errorf("runs/%s holds %d steps, want 5", id, len(all))
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "worktrees", "*")); len(left) != 0 {
		t.Errorf("worktrees left in the cache: %v", left)
	}
	if wts := run(t, filepath.Dir(mustGlob(t, filepath.Join(cache, "repos", "*", ".git"))), "git", "worktree", "list"); strings.Count(wts, "\n") != 1 {
		t.Errorf("the cache's clone still lists worktrees:\n%s", wts)
	}

	// The second implement got the verifier's report in its prompt.
	impl2 := mustGlob(t, filepath.Join(runs, "4-implement", "logs", "specs", "runs", "0001-a", "*", "impl-attempt-2.log"))
	data, err := os.ReadFile(impl2)
	if err != nil {
		t.Fatal(err)
	}
	if prompt := string(data); !strings.Contains(prompt, "Feedback from the previous attempt") || !strings.Contains(prompt, "out/0001-a.txt needs a second line.") {
		t.Errorf("the second implement's prompt lacks the verifier's report:\n%s", prompt)
	}
	if lines, err := os.ReadFile(filepath.Join(work, "out", "0001-a.txt")); err != nil || strings.Count(string(lines), "\n") != 2 {
		t.Errorf("out/0001-a.txt in the checkout = %q, %v; want both implementations' lines", lines, err)
	}
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s matches %v, want one", pattern, m)
	}
	return m[0]
}

// ralph worker --keep prunes the step transcripts older than that from
// its cache's runs/ when it starts; newer ones stay.
func TestWorkerPrunesOldTranscripts(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	old, recent := filepath.Join(cache, "runs", "wf-old", "1-plan"), filepath.Join(cache, "runs", "wf-recent", "1-plan")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"worker"}, c.args()...)
	w := start(t, dir, append(args, "--identity", "worker-a", "--cache", cache, "--keep", "2h")...)
	eventually(t, 30*time.Second, "the old transcript to be pruned", func() bool {
		_, err := os.Stat(filepath.Join(cache, "runs", "wf-old"))
		return os.IsNotExist(err)
	})
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("the recent transcript was pruned: %v\n%s", err, w.Output())
	}
}

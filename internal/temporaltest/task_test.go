package temporaltest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"
)

// progress is a task iteration's heartbeat detail (temporalrun.Progress).
type progress struct {
	Worker    string
	Attempt   int32
	Iteration int
	Events    int
	Phase     string
}

// stepsScript is n iterations that each take secs seconds and write
// part<i>.txt; the last finishes the task.
func stepsScript(n int, secs float64) string {
	var its []string
	for i := 1; i <= n; i++ {
		acts := fmt.Sprintf(`{"tool": "sleep", "seconds": %g}, {"tool": "write", "path": "part%d.txt", "content": "%d"}`, secs, i, i)
		if i == n {
			acts += `, {"tool": "write", "path": ".ralph/summary.md", "content": "Wrote the parts\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}`
		}
		its = append(its, fmt.Sprintf(`{"actions": [%s], "final": "part %d"}`, acts, i))
	}
	return `{"iterations": [` + strings.Join(its, ",\n") + `]}`
}

// watchHeartbeats samples the heartbeat details of workflow id's running
// ralph.TaskIteration until ctx ends.
func watchHeartbeats(ctx context.Context, c client.Client, id string) func() []progress {
	var mu sync.Mutex
	var seen []progress
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if d, err := c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
				for _, a := range d.GetPendingActivities() {
					hd := a.GetHeartbeatDetails().GetPayloads()
					if a.GetActivityType().GetName() != "ralph.TaskIteration" || len(hd) == 0 {
						continue
					}
					var p progress
					if json.Unmarshal(hd[0].GetData(), &p) == nil {
						mu.Lock()
						seen = append(seen, p)
						mu.Unlock()
					}
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return func() []progress {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// iterationActivities reads workflow id's history: how many
// ralph.TaskIteration activities were scheduled, and the identities of the
// workers that started them.
func iterationActivities(t *testing.T, c client.Client, id string) (int, []string) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]bool{}
	var workers []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "ralph.TaskIteration" {
				scheduled[e.GetEventId()] = true
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := e.GetActivityTaskStartedEventAttributes()
			if scheduled[a.GetScheduledEventId()] {
				workers = append(workers, a.GetIdentity())
			}
		}
	}
	return len(scheduled), workers
}

// A task's iterations are activities: a three-iteration task's workflow
// history has three ralph.TaskIteration activities, all run by the one
// worker its session is on though two serve the queue, and their
// heartbeats carry the iteration and a growing event count.
func TestTaskIterationsAreActivities(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	worker(t, c, "worker-b", 1)
	work := repo(t, map[string]string{"steps.json": stepsScript(3, 3)})
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "steps.json", "write three parts")
	sub := start(t, work, runArgs...)
	var id string
	eventually(t, 60*time.Second, "the task's workflow to start", func() bool {
		m := workflowRE.FindStringSubmatch(sub.Output())
		if m != nil {
			id = m[1]
		}
		return m != nil
	})
	tc := c.ts.GetDefaultClient()
	ctx, stop := context.WithCancel(context.Background())
	heartbeats := watchHeartbeats(ctx, tc, id)
	code := sub.wait(t, 120*time.Second)
	stop()
	if code != 0 {
		t.Fatalf("ralph run --temporal exit %d:\n%s", code, sub.Output())
	}
	m := regexp.MustCompile(`task ended on (worker-[ab]) with exit code 0`).FindStringSubmatch(sub.Output())
	if m == nil {
		t.Fatalf("submitter output:\n%s", sub.Output())
	}
	n, workers := iterationActivities(t, tc, id)
	if n != 3 || len(workers) != 3 {
		t.Fatalf("%d ralph.TaskIteration activities scheduled, %d started (%v); want 3", n, len(workers), workers)
	}
	for _, w := range workers {
		if w != m[1] {
			t.Errorf("iterations ran on %v, want all on %s (the session's worker)", workers, m[1])
			break
		}
	}
	var seen []progress
	for _, p := range heartbeats() {
		// The first beat comes before ralph run has a store.
		if p.Iteration != 0 || p.Events != 0 {
			seen = append(seen, p)
		}
	}
	iterations := map[int]bool{}
	for i, p := range seen {
		iterations[p.Iteration] = true
		if p.Worker != m[1] || p.Attempt != 1 || p.Iteration < 1 || p.Iteration > 3 {
			t.Errorf("heartbeat %+v", p)
		}
		if i > 0 && p.Events < seen[i-1].Events {
			t.Errorf("the event count went down: %+v then %+v", seen[i-1], p)
		}
	}
	if len(iterations) < 2 || len(seen) == 0 || seen[len(seen)-1].Events <= seen[0].Events {
		t.Errorf("heartbeats seen: %+v; want iterations numbered and the event count growing", seen)
	}
	// The task's work landed.
	for i := 1; i <= 3; i++ {
		if got, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("part%d.txt", i))); err != nil || string(got) != itoa(i) {
			t.Errorf("part%d.txt = %q, %v", i, got, err)
		}
	}
}

// kill -9 of the worker running a task, mid-iteration, with another
// worker up: the task's session fails on heartbeat and the task starts
// again on the other worker, in a new session from the base commit, and
// completes; its branch has one commit, and the submitter and ralph status
// name the restart.
func TestTaskRestartsOnAnotherWorkerAfterKill(t *testing.T) {
	c := newCluster(t)
	a, cacheA := worker(t, c, "worker-a", 1)
	b, cacheB := worker(t, c, "worker-b", 1)
	work := repo(t, map[string]string{"steps.json": stepsScript(4, 2)})
	base := strings.TrimSpace(run(t, work, "git", "rev-parse", "HEAD"))
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--heartbeat-timeout", "3s", "--agent", "script", "--script", "steps.json", "write four parts")
	sub := start(t, work, runArgs...)
	var id string
	eventually(t, 60*time.Second, "the task's workflow to start", func() bool {
		m := workflowRE.FindStringSubmatch(sub.Output())
		if m != nil {
			id = m[1]
		}
		return m != nil
	})
	// Kill the worker whose attempt has written part1.txt: it runs the
	// second iteration (or later) now.
	var victim *proc
	var lost, other string
	eventually(t, 90*time.Second, "a worker to finish the task's first iteration", func() bool {
		for _, w := range []struct {
			p           *proc
			cache, name string
			other       string
		}{{a, cacheA, "worker-a", "worker-b"}, {b, cacheB, "worker-b", "worker-a"}} {
			if _, err := os.Stat(filepath.Join(w.cache, "worktrees", id, "attempt-1", "part1.txt")); err == nil {
				victim, lost, other = w.p, w.name, w.other
				return true
			}
		}
		return false
	})
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	victim.wait(t, 10*time.Second)
	if code := sub.wait(t, 120*time.Second); code != 0 {
		t.Fatalf("ralph run --temporal exit %d after %s was killed:\n%s", code, lost, sub.Output())
	}
	out := sub.Output()
	if !strings.Contains(out, "task: restarted: attempt 1 on "+lost+" failed: the worker was lost") ||
		!strings.Contains(out, "attempt 2 starts again from the base commit in a new session") {
		t.Errorf("the submitter did not say the task restarted:\n%s", out)
	}
	if !strings.Contains(out, "task ended on "+other+" with exit code 0") {
		t.Errorf("the task did not end on %s:\n%s", other, out)
	}
	m := branchRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no branch pushed:\n%s", out)
	}
	run(t, work, "git", "fetch", "-q", "origin", m[1])
	if n := strings.TrimSpace(run(t, work, "git", "rev-list", "--count", base+"..FETCH_HEAD")); n != "1" {
		t.Errorf("%s has %s commits on the base, want 1:\n%s", m[1], n, run(t, work, "git", "log", "--format=%h %s", base+"..FETCH_HEAD"))
	}
	for i := 1; i <= 4; i++ {
		if got := run(t, work, "git", "show", fmt.Sprintf("FETCH_HEAD:part%d.txt", i)); got != itoa(i) {
			t.Errorf("part%d.txt on %s = %q", i, m[1], got)
		}
	}
	if !strings.Contains(out, "landed "+m[1]) {
		t.Errorf("the task did not land:\n%s", out)
	}
	st := run(t, work, ralphBin, append([]string{"status"}, c.args()...)...)
	if !strings.Contains(st, "restarted: attempt 1 on "+lost+" failed: the worker was lost") || !strings.Contains(st, "ended on "+other+" with exit code 0") {
		t.Errorf("status after the restart:\n%s", st)
	}
	// The finished attempt left its transcript in the cache of the worker
	// that ran it, and no worktree.
	otherCache := cacheA
	if other == "worker-b" {
		otherCache = cacheB
	}
	if _, err := os.Stat(filepath.Join(otherCache, "runs", id, "task-attempt-2", "ralph.db")); err != nil {
		t.Errorf("no transcript in %s's cache: %v", other, err)
	}
	if !strings.Contains(out, "transcript "+other+":"+filepath.Join(otherCache, "runs", id, "task-attempt-2", "ralph.db")) {
		t.Errorf("the submitter did not name the transcript:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(otherCache, "worktrees", id)); !os.IsNotExist(err) {
		t.Errorf("the finished attempt's worktree is still there: %v", err)
	}
}

// While the Temporal server is down, the submitter says once that it
// does not answer and goes on trying, instead of printing nothing.
func TestSubmitterSaysTheServerIsDown(t *testing.T) {
	c := newCluster(t)
	worker(t, c, "worker-a", 1)
	work := repo(t, map[string]string{"slow.json": slowScript(60)})
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "slow.json", "--max-iterations", "500", "count")
	sub := start(t, work, runArgs...)
	eventually(t, 90*time.Second, "the run to reach its second iteration", func() bool {
		return strings.Contains(sub.Output(), "iteration 2")
	})
	c.ts.Stop()
	const said = "ralph: the Temporal server does not answer"
	eventually(t, 60*time.Second, "the submitter to say the server does not answer", func() bool {
		return strings.Contains(sub.Output(), said)
	})
	time.Sleep(5 * time.Second)
	if out := sub.Output(); strings.Count(out, said) != 1 || !strings.Contains(out, "retrying until it does") {
		t.Errorf("the submitter should say once that the server is down and that it retries:\n%s", out)
	}
	select {
	case <-sub.done:
		t.Errorf("the submitter gave up while the server was down:\n%s", sub.Output())
	default:
	}
}

// Heartbeats that take the cluster longer than the worker's call
// deadline for a few seconds (a loaded machine) do not end the task: the
// worker is alive, so the attempt goes on and nothing restarts. They
// used to cancel the iteration ("context canceled") or fail the session
// ("session failed due to worker shutdown") with no worker lost.
func TestSlowHeartbeatsDoNotRestartTheTask(t *testing.T) {
	var slowUntil atomic.Int64
	slow := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if strings.HasSuffix(info.FullMethod, "/RecordActivityTaskHeartbeat") && time.Now().UnixNano() < slowUntil.Load() {
			select {
			case <-time.After(1500 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return handler(ctx, req)
	}
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseServerOptions(temporal.WithChainedFrontendGrpcInterceptors(slow)))
	c := cluster{addr: ts.GetFrontendHostPort(), ns: ts.GetDefaultNamespace(), ts: ts}
	worker(t, c, "worker-a", 1)
	work := repo(t, map[string]string{"steps.json": stepsScript(3, 4)})
	runArgs := append([]string{"run"}, c.args()...)
	runArgs = append(runArgs, "--agent", "script", "--script", "steps.json", "write three parts")
	sub := start(t, work, runArgs...)
	eventually(t, 90*time.Second, "the task's first iteration to run", func() bool {
		return strings.Contains(sub.Output(), "iteration 1")
	})
	slowUntil.Store(time.Now().Add(8 * time.Second).UnixNano())
	if code := sub.wait(t, 180*time.Second); code != 0 {
		t.Fatalf("ralph run --temporal exit %d:\n%s", code, sub.Output())
	}
	if out := sub.Output(); strings.Contains(out, "restarted") || !strings.Contains(out, "task ended on worker-a with exit code 0") {
		t.Errorf("slow heartbeats restarted the task:\n%s", out)
	}
}

package temporalclient

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/serve"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/temporalrun"
	"github.com/ralph-harness/ralph/internal/workspace"
)

func ids(recs []submitted) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

// The workspace remembers the workflows it submitted, newest first: a
// resubmitted one moves to the front, the list is bounded, the task is
// the one ralph resume follows, and a workflow an older ralph recorded
// alone is still followed.
func TestRecordWorkflows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ws, err := workspace.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := recordedWorkflows(ctx, ws); err != nil || len(recs) != 0 {
		t.Fatalf("a workspace without a store records %v, %v", recs, err)
	}
	if ok, _ := FollowsWorkflows(ctx, ws, ModeFollow); ok {
		t.Error("a fresh workspace follows workflows")
	}
	// What an older ralph left: the task's id alone.
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	st, err := session.OpenStore(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetState(ctx, keyTemporalWorkflow, "ralph-task-old"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if recs, _ := recordedWorkflows(ctx, ws); !slices.Equal(ids(recs), []string{"ralph-task-old"}) || recs[0].Kind != temporalrun.KindTask {
		t.Fatalf("the old record reads as %+v", recs)
	}
	for _, r := range []submitted{
		{ID: "ralph-spec-x-a", Kind: temporalrun.KindSpec, Name: "a", Batch: "b1"},
		{ID: "ralph-spec-x-b", Kind: temporalrun.KindSpec, Name: "b", Batch: "b1"},
		{ID: "ralph-task-1", Kind: temporalrun.KindTask, Name: "t", Batch: "ralph-task-1"},
		{ID: "ralph-spec-x-a", Kind: temporalrun.KindSpec, Name: "a", Batch: "b2"},
	} {
		if err := recordWorkflows(ctx, ws, r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := recordedWorkflows(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ralph-spec-x-a", "ralph-task-1", "ralph-spec-x-b", "ralph-task-old"}; !slices.Equal(ids(recs), want) {
		t.Errorf("recorded %v, want %v", ids(recs), want)
	}
	if recs[0].Batch != "b2" || recs[0].At.IsZero() {
		t.Errorf("the resubmitted spec = %+v", recs[0])
	}
	st, err = session.OpenStore(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := st.State(ctx, keyTemporalWorkflow); id != "ralph-task-1" {
		t.Errorf("ralph resume follows %q, want ralph-task-1", id)
	}
	st.Close()
	for mode, want := range map[Mode]bool{ModeFollow: true, ModeFollowTask: true, ModeFollowSpecs: true} {
		if ok, _ := FollowsWorkflows(ctx, ws, mode); ok != want {
			t.Errorf("FollowsWorkflows(%d) = %v", mode, !want)
		}
	}
	// A task run here since: the local store is the newer run.
	st, err = session.OpenStore(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateTask(ctx, 7, "a local task", "feature", "script"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if ok, why := FollowsWorkflows(ctx, ws, ModeFollow); ok || !strings.Contains(why, "task 7 ran here (--local) after") {
		t.Errorf("after a local task: follows %v (%s)", ok, why)
	}
	for i := range maxRecorded + 5 {
		if err := recordWorkflows(ctx, ws, submitted{ID: fmt.Sprintf("ralph-task-%d", 100+i), Kind: temporalrun.KindTask}); err != nil {
			t.Fatal(err)
		}
	}
	recs, _ = recordedWorkflows(ctx, ws)
	if len(recs) != maxRecorded || recs[0].ID != fmt.Sprintf("ralph-task-%d", 100+maxRecorded+4) {
		t.Errorf("after %d more: %d recorded, first %s", maxRecorded+5, len(recs), recs[0].ID)
	}
}

// remoteRun turns a workflow's snapshot into the dashboard's row.
func TestRemoteRun(t *testing.T) {
	asked := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	req := temporalrun.Request{ID: 2, Type: "approval", Prompt: "Deploy?", CreatedAt: asked}
	for _, tc := range []struct {
		name string
		s    temporalrun.Snapshot
		want func(r serve.RemoteRun) bool
	}{
		{"running, waiting", temporalrun.Snapshot{
			Status:  temporalrun.Status{Job: temporalrun.Job{Kind: "task", Name: "ship"}, Pending: temporalrun.Pending{Attempt: 2, Requests: []temporalrun.Request{req}}, Stop: "later"},
			Running: &temporalrun.Progress{Worker: "w1", Attempt: 2, Iteration: 5, Events: 40, Phase: "implement"},
		}, func(r serve.RemoteRun) bool {
			return r.Running && !r.Ended && r.Worker == "w1" && r.Attempt == 2 && r.Iteration == 5 && r.Events == 40 && r.Phase == "implement" &&
				len(r.Pending) == 1 && r.Pending[0].ID == 2 && r.Pending[0].Status == store.HumanPending && r.Pending[0].CreatedAt.Equal(asked) && r.Stop == "later" &&
				r.State == "attempt 2 on w1 · implement · iteration 5 · 40 events · waiting for a human: request 2: Deploy?"
		}},
		{"running, its worker silent", temporalrun.Snapshot{
			Status:      temporalrun.Status{Job: temporalrun.Job{Kind: "task", Name: "ship"}},
			Running:     &temporalrun.Progress{Worker: "w1", Attempt: 1, Iteration: 2, Events: 9, Phase: "build"},
			SilentSince: asked,
		}, func(r serve.RemoteRun) bool {
			return r.Running && r.Worker == "w1" &&
				strings.HasPrefix(r.State, "attempt 1 on w1 (not heard from since "+asked.Local().Format(time.TimeOnly)+": lost if it stays silent until the heartbeat timeout) · build")
		}},
		{"completed", temporalrun.Snapshot{
			Status: temporalrun.Status{Job: temporalrun.Job{Kind: "spec", Name: "0001-a"}, Pending: temporalrun.Pending{Requests: []temporalrun.Request{req}}, Done: true, Attempts: 1,
				Result: &temporalrun.Result{ExitCode: 0, Worker: "w2", Branch: "ralph/spec/0001-a", Commit: "abc", Transcript: "w2:/x"}},
			Closed: "WORKFLOW_EXECUTION_STATUS_COMPLETED",
		}, func(r serve.RemoteRun) bool {
			return !r.Running && r.Ended && r.ExitCode == 0 && r.Worker == "w2" && r.Branch == "ralph/spec/0001-a" && r.Commit == "abc" &&
				r.Transcript == "w2:/x" && len(r.Pending) == 0 && r.Closed == "completed" && r.Attempt == 1
		}},
		{"failed", temporalrun.Snapshot{
			Status: temporalrun.Status{Job: temporalrun.Job{Kind: "task"}, Error: "activity error"},
			Closed: "WORKFLOW_EXECUTION_STATUS_FAILED",
		}, func(r serve.RemoteRun) bool {
			return !r.Running && !r.Ended && r.Closed == "failed" && r.Error == "activity error" && r.State == "failed"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := remoteRun("wf", tc.s); !tc.want(r) || r.ID != "wf" || r.Kind != tc.s.Job.Kind {
				t.Errorf("remoteRun = %+v", r)
			}
		})
	}
}

// A workflow that pushed nothing (a stopped task) says so, instead of
// naming its branch "at" no commit.
func TestPushedNamesNoEmptyCommit(t *testing.T) {
	for _, tc := range []struct {
		r    temporalrun.Result
		want string
	}{
		{temporalrun.Result{Branch: "ralph/task/x", Commit: "abc123"}, "branch ralph/task/x at abc123"},
		{temporalrun.Result{Branch: "ralph/task/x", ExitCode: 9}, "nothing pushed"},
	} {
		if got := pushed(&tc.r); got != tc.want {
			t.Errorf("pushed(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// A progress line says what a workflow's snapshot shows; one whose result
// is in but whose close the cluster has not recorded yet has ended, and
// waits for no worker.
func TestProgressLine(t *testing.T) {
	tests := []struct {
		name string
		s    temporalrun.Snapshot
		want string
	}{
		{"queued", temporalrun.Snapshot{}, "task: waiting for a worker"},
		{"unclaimed attempt", temporalrun.Snapshot{Running: &temporalrun.Progress{Attempt: 2}}, "task: attempt 2 waiting for a worker"},
		{"running", temporalrun.Snapshot{Running: &temporalrun.Progress{Attempt: 1, Worker: "w1", Phase: "build", Iteration: 3, Events: 20}},
			"task: attempt 1 on w1 · build · iteration 3 · 20 events"},
		{"result in, not closed yet", temporalrun.Snapshot{Status: temporalrun.Status{Result: &temporalrun.Result{ExitCode: 0, Worker: "w1"}}},
			"task: ended on w1 with exit code 0"},
		{"result in before any worker", temporalrun.Snapshot{Status: temporalrun.Status{Result: &temporalrun.Result{ExitCode: 3}}},
			"task: ended with exit code 3"},
		{"closed", temporalrun.Snapshot{Status: temporalrun.Status{Result: &temporalrun.Result{ExitCode: 0, Worker: "w1"}}, Closed: "WORKFLOW_EXECUTION_STATUS_COMPLETED"},
			"task: completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressLine("task", tt.s); got != tt.want {
				t.Errorf("progressLine = %q, want %q", got, tt.want)
			}
		})
	}
}

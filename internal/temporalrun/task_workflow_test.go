package temporalrun

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// fakeTask stands in for a worker's task activities: prepare makes a
// worktree named after the attempt; each iteration's exit code comes from
// exits (the last repeats); finish returns the last exit code.
type fakeTask struct {
	mu         sync.Mutex
	prepares   []TaskStep
	iterations []TaskStep
	finishes   []TaskStep
	// prepare and iterate, when set, decide instead.
	prepare func(TaskStep) error
	iterate func(TaskStep) (Ran, error)
	exits   []int
}

func (f *fakeTask) register(env *testsuite.TestWorkflowEnvironment) {
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivityWithOptions(func(ctx context.Context, s TaskStep) (Prepared, error) {
		f.mu.Lock()
		f.prepares = append(f.prepares, s)
		f.mu.Unlock()
		if f.prepare != nil {
			if err := f.prepare(s); err != nil {
				return Prepared{}, err
			}
		}
		return Prepared{Worktree: "/cache/worktrees/attempt-" + strconv.Itoa(int(s.Attempt)), Worker: "w" + strconv.Itoa(int(s.Attempt))}, nil
	}, activity.RegisterOptions{Name: TaskPrepareActivity})
	env.RegisterActivityWithOptions(func(ctx context.Context, s TaskStep) (Ran, error) {
		f.mu.Lock()
		f.iterations = append(f.iterations, s)
		n := len(f.iterations)
		f.mu.Unlock()
		if f.iterate != nil {
			return f.iterate(s)
		}
		return Ran{ExitCode: f.exits[min(n, len(f.exits))-1]}, nil
	}, activity.RegisterOptions{Name: TaskIterationActivity})
	env.RegisterActivityWithOptions(func(ctx context.Context, s TaskStep) (Result, error) {
		f.mu.Lock()
		f.finishes = append(f.finishes, s)
		f.mu.Unlock()
		return Result{ExitCode: s.ExitCode, Branch: s.Job.Branch, Worker: "w" + strconv.Itoa(int(s.Attempt)), Commit: "c0ffee"}, nil
	}, activity.RegisterOptions{Name: TaskFinishActivity})
}

func taskJob() Job {
	return Job{Kind: KindTask, Name: "ship it", Branch: "ralph/task/1", Args: []string{"run", "--agent=script", "--", "ship it"},
		HeartbeatTimeout: 5 * time.Second, MaxAttempts: 2}
}

func status(t *testing.T, env *testsuite.TestWorkflowEnvironment) Status {
	t.Helper()
	v, err := env.QueryWorkflow(QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// The task's iterations run one activity each, in one session on one
// worktree, while ralph yields (exit 13); the first runs ralph run, the
// rest ralph resume; the one that ends the task is followed by finish,
// whose result is the workflow's.
func TestTaskWorkflowLoopsWhileYielding(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeTask{exits: []int{13, 13, 0}}
	f.register(env)
	env.ExecuteWorkflow(TaskWorkflow, taskJob())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Commit != "c0ffee" || res.Worker != "w1" {
		t.Errorf("result = %+v", res)
	}
	if len(f.prepares) != 1 || len(f.iterations) != 3 || len(f.finishes) != 1 {
		t.Fatalf("%d prepares, %d iterations, %d finishes; want 1, 3, 1", len(f.prepares), len(f.iterations), len(f.finishes))
	}
	for i, it := range f.iterations {
		if it.Iteration != i+1 || it.Attempt != 1 || it.Worktree != "/cache/worktrees/attempt-1" {
			t.Errorf("iteration activity %d got %+v", i+1, it)
		}
	}
	if got := strings.Join(iterationArgs(f.iterations[0]), " "); got != "run --yield-after=1 --agent=script -- ship it" {
		t.Errorf("the first iteration runs ralph %s", got)
	}
	if got := strings.Join(iterationArgs(f.iterations[1]), " "); got != "resume --local --yield-after=1" {
		t.Errorf("the second iteration runs ralph %s", got)
	}
	if st := status(t, env); !st.Done || st.Attempts != 1 || len(st.Restarts) != 0 {
		t.Errorf("status = %+v", st)
	}
}

// A stop signal that arrives while an iteration runs reaches the next
// iteration, which stops the task (exit 8); the task is finished as
// stopped.
func TestTaskWorkflowStopsBetweenIterations(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeTask{}
	f.iterate = func(s TaskStep) (Ran, error) {
		switch {
		case s.Iteration == 1:
			env.SignalWorkflow(SignalStop, "enough")
			return Ran{ExitCode: 13}, nil
		case s.Stop != "":
			return Ran{ExitCode: 8, Tail: "stopped on request: " + s.Stop}, nil
		}
		return Ran{ExitCode: 13}, nil
	}
	f.register(env)
	env.ExecuteWorkflow(TaskWorkflow, taskJob())
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 8 {
		t.Errorf("result = %+v, want exit 8", res)
	}
	if len(f.iterations) != 2 || f.iterations[1].Stop != "enough" {
		t.Fatalf("iterations = %+v, want the second to carry the stop", f.iterations)
	}
	if len(f.finishes) != 1 || f.finishes[0].ExitCode != 8 || !strings.Contains(f.finishes[0].Tail, "enough") {
		t.Errorf("finish got %+v", f.finishes)
	}
}

// When the session's worker is lost (an iteration times out on its
// heartbeat), the task starts again from prepare in a new session, as the
// next attempt, and the status says why.
func TestTaskWorkflowRestartsWhenTheWorkerIsLost(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeTask{}
	f.iterate = func(s TaskStep) (Ran, error) {
		if s.Attempt == 1 && s.Iteration == 2 {
			return Ran{}, temporal.NewHeartbeatTimeoutError()
		}
		if s.Iteration < 3 {
			return Ran{ExitCode: 13}, nil
		}
		return Ran{ExitCode: 0}, nil
	}
	f.register(env)
	env.ExecuteWorkflow(TaskWorkflow, taskJob())
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Worker != "w2" {
		t.Errorf("result = %+v, want exit 0 from the second attempt's worker", res)
	}
	if len(f.prepares) != 2 || f.prepares[1].Attempt != 2 {
		t.Fatalf("prepares = %+v, want a second attempt", f.prepares)
	}
	var second []int
	for _, it := range f.iterations {
		if it.Attempt == 2 {
			second = append(second, it.Iteration)
			if it.Worktree != "/cache/worktrees/attempt-2" {
				t.Errorf("attempt 2 iterated in %s", it.Worktree)
			}
		}
	}
	if len(second) != 3 || second[0] != 1 {
		t.Errorf("attempt 2 ran iteration activities %v, want 1 2 3 (from ralph run again)", second)
	}
	st := status(t, env)
	want := "attempt 1 on w1 failed: the worker was lost (no heartbeat); attempt 2 starts again from the base commit in a new session"
	if st.Attempts != 2 || len(st.Restarts) != 1 || st.Restarts[0] != want {
		t.Errorf("status = %+v", st)
	}
}

// A task whose every attempt fails ends in an error once its attempts
// are spent.
func TestTaskWorkflowOutOfAttempts(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := &fakeTask{prepare: func(TaskStep) error { return errors.New("remote unreachable") }}
	f.register(env)
	env.ExecuteWorkflow(TaskWorkflow, taskJob())
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "no attempts left (2)") || !strings.Contains(err.Error(), "remote unreachable") {
		t.Fatalf("workflow error = %v", err)
	}
	if len(f.prepares) != 2 || len(f.iterations) != 0 {
		t.Errorf("%d prepares and %d iterations, want 2 and 0", len(f.prepares), len(f.iterations))
	}
	if st := status(t, env); !st.Done || st.Error != "attempt 2 on a worker failed: remote unreachable; no attempts left (2)" || len(st.Restarts) != 1 {
		t.Errorf("status = %+v", st)
	}
}

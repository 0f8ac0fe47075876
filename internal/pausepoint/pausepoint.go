// Package pausepoint is a test-only seam for crash tests: it lets a test
// stop a real ralph process at an exact point of its real code path, so
// that the test can kill it there with a real SIGKILL and check what
// `ralph resume` makes of the state left behind.
//
// ralph calls At(name) at the points a crash test needs (see the Point
// constants). Nothing happens unless the environment asks for it:
//
//	RALPH_TEST_PAUSE=NAME        pause at the first arrival at point NAME
//	RALPH_TEST_PAUSE=NAME@N      pause at the N-th arrival (1-based)
//	RALPH_TEST_PAUSE_FILE=PATH   when pausing, first write NAME to PATH
//
// A paused process blocks the goroutine that reached the point forever:
// it is meant to be killed. Without RALPH_TEST_PAUSE, At costs one
// environment lookup made once per process.
package pausepoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Points where ralph can pause, in the order a task reaches them.
const (
	// RequestWritten: ralph run has written .ralph/request.json and
	// taken the lock; the store does not exist yet for a first task.
	RequestWritten = "request-written"
	// StoreOpened: the store exists (ralph.db); no task, and for ralph
	// run --worktree no worktree task, is recorded in it yet.
	StoreOpened = "store-opened"
	// TaskRecorded: the task's row is in the store; nothing of the task
	// start (snapshot, counter, task.md) is done yet.
	TaskRecorded = "task-recorded"
	// TaskPreSnapshot: task-N-pre is saved in git, not yet in the store.
	TaskPreSnapshot = "task-pre-snapshot"
	// TaskCounter: summary.md and feedback.md are cleared and the history
	// line written; task-counter.txt has not moved yet.
	TaskCounter = "task-counter"
	// TaskWritten: task.md is written; the task start is not yet marked
	// complete in the store.
	TaskWritten = "task-written"
	// IterationFile: iteration.txt holds the new number; the store has
	// no row for the iteration yet.
	IterationFile = "iteration-file"
	// PlanValidation: plan.tsx was validated and feedback.md written; the
	// phase has not flipped yet.
	PlanValidation = "plan-validation"
	// AgentEvent: the agent is running and one of its events is recorded.
	AgentEvent = "agent-event"
	// Gates: the gates have run, their results are not recorded yet.
	Gates = "gates"
	// PostSnapshot: the gates passed and task-N-post is saved in git, not
	// yet in the store, and the task is not yet recorded as done.
	PostSnapshot = "post-snapshot"
)

var (
	once  sync.Once
	want  string
	nth   int
	file  string
	mu    sync.Mutex
	count = map[string]int{}
)

func load() {
	v := os.Getenv("RALPH_TEST_PAUSE")
	if v == "" {
		return
	}
	want, nth = v, 1
	if name, n, ok := strings.Cut(v, "@"); ok {
		if k, err := strconv.Atoi(n); err == nil && k > 0 {
			want, nth = name, k
		}
	}
	file = os.Getenv("RALPH_TEST_PAUSE_FILE")
}

// At pauses forever when the environment names point (see the package
// documentation); otherwise it returns at once.
func At(point string) {
	once.Do(load)
	if want == "" || point != want {
		return
	}
	mu.Lock()
	count[point]++
	hit := count[point] == nth
	mu.Unlock()
	if !hit {
		return
	}
	if file != "" {
		_ = os.WriteFile(file, []byte(point+"\n"), 0o644)
	}
	for {
		time.Sleep(time.Hour)
	}
}

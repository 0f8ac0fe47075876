package status

import (
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/store"
)

// ralph status names the task's state, where it runs, the plan's
// verdict, the last gates and what waits for a human, each on its line.
func TestPrint(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		name string
		r    Report
		want []string
	}{
		{
			name: "running",
			r: Report{
				Task:    store.Task{Number: 3, Message: "add a\nfooter", Status: store.TaskRunning, StartedAt: start},
				Running: true, PID: 42, Phase: "build", Iteration: 2,
				Plan:    &PlanStatus{Valid: false, Failures: []plan.Finding{{Message: "no theme"}}},
				Gates:   []store.GateResult{{Gate: "tests", Status: "fail"}},
				Pending: []store.HumanRequest{{ID: 7, Prompt: "ship it?"}},
			},
			want: []string{"task 3: add a footer\n", "state:      running (pid 42)\n", "plan:       1 failure, 0 warnings", "gates:     fail tests\n", "waiting:    request 7: ship it? — ralph approve 7 / ralph reject 7\n"},
		},
		{
			name: "interrupted",
			r:    Report{Task: store.Task{Number: 1, Status: store.TaskInterrupted, StartedAt: start}},
			want: []string{"state:      interrupted — continue with `ralph resume`\n"},
		},
		{
			name: "ended in a worktree, not landed",
			r: Report{
				Task:     store.Task{Number: 2, Status: store.TaskDone, Reason: "completed", Detail: "all gates passed", StartedAt: start, EndedAt: start.Add(time.Second)},
				Worktree: ".ralph/worktrees/task-2", Branch: "ralph/task-2", NotLanded: true,
				Totals: Totals{Tasks: 2, CostUSD: 1.5},
			},
			want: []string{"state:      ended\n", "ended:      completed — all gates passed\n", "worktree:   .ralph/worktrees/task-2 on branch ralph/task-2\n", "landing:    not landed yet", "elapsed:    1s\n", "all tasks:  2 tasks, $1.5000"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			Print(&b, tc.r)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in:\n%s", w, b.String())
				}
			}
		})
	}
}

package planreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/mutation"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/task"
)

// defaultTaskFile is where the current task lives, relative to the
// workspace.
const defaultTaskFile = ".ralph/task.md"

// Update prints the context an agent gets to update the plan file arg
// for the task in taskFile (default .ralph/task.md).
func Update(ctx context.Context, g *Globals, taskFile string, arg string) error {
	root, err := parsePlan(g, arg)
	if err != nil {
		return err
	}
	t, err := readTask(g, taskFile)
	if err != nil {
		return err
	}
	if t.Counter <= 0 {
		t.Counter = taskCounter(g)
	}
	var b strings.Builder
	b.WriteString(mutation.Context(root, t))
	if prev := previousPlanFindings(ctx, g, root, t); prev != "" {
		b.WriteString(prev)
	}
	_, err = io.WriteString(g.Stdout, b.String())
	return err
}

// readTask reads and parses the task file named by arg (default
// .ralph/task.md), resolved against the workspace dir.
func readTask(g *Globals, arg string) (task.Task, error) {
	path := arg
	if path == "" {
		path = filepath.FromSlash(defaultTaskFile)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(g.Dir, path)
	}
	src, err := readRegular(path)
	if errors.Is(err, fs.ErrNotExist) && arg == "" {
		return task.Task{}, fmt.Errorf("no task: %s does not exist (ralph run writes it when a task starts)", defaultTaskFile)
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("read task: %w", err)
	}
	t, err := task.Parse(src)
	if err != nil {
		return task.Task{}, failure.New(failure.Failed, fmt.Errorf("%s: %w", filepath.Base(path), err))
	}
	return t, nil
}

// taskCounter reads .ralph/task-counter.txt; 0 when it is missing.
func taskCounter(g *Globals) int {
	b, err := os.ReadFile(filepath.Join(g.Dir, ".ralph", "task-counter.txt"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// previousPlanFindings checks root against the plan at task start, read
// from the task-N-pre snapshot, and renders the failures that check adds;
// "" when there is no snapshot, no plan in it, or nothing to add.
func previousPlanFindings(ctx context.Context, g *Globals, root *plan.Node, t task.Task) string {
	snaps, err := snapshot.Open(ctx, g.Dir, g.Logger)
	if err != nil {
		return ""
	}
	prev, err := mutation.PreviousPlan(ctx, snaps, t.Counter)
	if err != nil || prev == nil {
		return ""
	}
	res := mutation.Validate(root, prev, t, t.Counter)
	if len(res.Failures) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Against the plan at %s\n\n", snapshot.TaskPre(t.Counter))
	for _, f := range res.Failures {
		b.WriteString(f.Format("FAIL", plan.DefaultFile) + "\n")
	}
	return b.String()
}

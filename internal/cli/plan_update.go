package cli

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

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/mutation"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/task"
)

// defaultTaskFile is where the current task lives, relative to the
// workspace.
const defaultTaskFile = ".ralph/task.md"

// PlanUpdateOptions are the flags of ralph plan update.
type PlanUpdateOptions struct {
	// Task is the task file; empty means .ralph/task.md.
	Task string
}

// AddFlags registers the options' flags on cmd.
func (o *PlanUpdateOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Task, "task", "", "the task file (default .ralph/task.md)")
}

func newPlanUpdateCommand(g *Globals) *cobra.Command {
	var opts PlanUpdateOptions
	cmd := &cobra.Command{
		Use:   "update [FILE]",
		Short: "Show what a mutation task's plan update has to mark",
		Long: `For a mutation task the agent updates the existing plan (default
.ralph/plan.tsx) in place and marks every change with a comment:
{/* TASK-N [ADD]: … */}, [MODIFY], [FIX], [REMOVE], {/* … PRESERVED … */}
and {/* NO CHANGES for task-N */}. This command prints what that takes: the
plan's theme, screens and sections with their source files and markers, the
requirements of .ralph/task.md with the sections each one most likely
touches and the marker that carries it, the PRESERVE and AFFECTED FILES
lines, and what is still unmarked. When the task-N-pre snapshot holds the
plan as it was when the task started, sections dropped since without a
[REMOVE] marker are listed too. It changes nothing and exits 0.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlanUpdate(cmd.Context(), g, opts, firstArg(args))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func runPlanUpdate(ctx context.Context, g *Globals, opts PlanUpdateOptions, arg string) error {
	root, err := parsePlan(g, arg)
	if err != nil {
		return err
	}
	t, err := readTask(g, opts.Task)
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
	src, err := os.ReadFile(path)
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

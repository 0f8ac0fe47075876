package cli

import (
	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/planreport"
)

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
			return planreport.Update(cmd.Context(), g, opts.Task, firstArg(args))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

package cli

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/status"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

func newStatusCommand(g *Globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show where the current task stands",
		Long:  "Show the current task: its phase, iteration, last gate results, cost and\nwhether a run is active. Works while a run is going. A ralph run --worktree\ntask shows its worktree's state and names its worktree and branch.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, st, err := openRunStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := buildStatus(ctx, ws, st)
			specs, serr := status.WorktreeSpecs(ctx, st)
			if serr != nil {
				return serr
			}
			if err != nil {
				var ee *failure.Error
				if !errors.As(err, &ee) || len(specs) == 0 {
					return err
				}
				// Only a parallel spec run so far: show its specs.
				rep = status.Report{Running: ws.HolderPID() != 0, PID: ws.HolderPID(), Specs: specs}
				if asJSON {
					enc := json.NewEncoder(g.Stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(rep)
				}
				status.PrintSpecs(g.Stdout, ws, rep)
				return nil
			}
			rep.Specs = specs
			if asJSON {
				enc := json.NewEncoder(g.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			status.Print(g.Stdout, rep)
			status.PrintSpecs(g.Stdout, ws, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// buildStatus reads what ralph status shows, a ralph run --worktree
// task's state from its worktree.
func buildStatus(ctx context.Context, ws *workspace.Workspace, st *store.Store) (status.Report, error) {
	return status.Build(ctx, ws, st, func(ctx context.Context, t store.Task) *status.Worktree {
		rec, err := currentWorktreeTask(ctx, ws, st)
		if err != nil || rec == nil {
			return nil
		}
		if id, ok := rec.taskID(ctx, st); !ok || id != t.ID {
			return nil
		}
		return &status.Worktree{Dir: rec.Dir, Branch: rec.Branch, Landing: rec.Landing}
	})
}

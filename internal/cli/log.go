package cli

import (
	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/status"
)

func newLogCommand(g *Globals) *cobra.Command {
	var follow, asJSON, all, specs bool
	var last int
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the event stream: what the agent did and what the harness decided",
		Long: `Show the current task's events: the agent's text, tool calls with their
input, tool results, usage, and the harness's decisions (plan validated,
gates failed, stalls, the end). -f follows a running task until it ends.

After ralph specs run (or with --specs), show the spec pipeline's agent
calls and landings instead, each with its spec and worktree, as they start
and end: with --parallel N, one line per spec's step as it happens.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, st, err := openRunStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			if !specs && !all {
				specs, err = status.SpecsAreLatest(ctx, st)
				if err != nil {
					return err
				}
			}
			if specs {
				return status.SpecCalls(ctx, g.Stdout, ws, st, follow)
			}
			return status.Events(ctx, g.Stdout, ws, st, all, follow, asJSON, last)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they happen, until the task ends")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per event")
	cmd.Flags().IntVarP(&last, "lines", "n", 0, "show only the last N events (0: all)")
	cmd.Flags().BoolVar(&all, "all", false, "show every task's events, not just the latest task's")
	cmd.Flags().BoolVar(&specs, "specs", false, "show the spec pipeline's calls (ralph specs run) instead of a task's events")
	return cmd
}

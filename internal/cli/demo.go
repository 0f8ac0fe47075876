package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/demo"
)

func newDemoCommand(g *Globals) *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole lifecycle offline, in a temporary repository",
		Long: `Create a temporary git repository from an example bundled in ralph and run
a scripted agent through it: a plan that fails validation, a fixed plan, the
BUILD phase, a quality gate that fails, the fix, passing gates and the
task-1-post snapshot. No network, no API key. The repository is left behind
so you can look at it with ralph status, ralph log and ralph snapshot list.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), g, dir, asJSON)
		},
	}
	cmd.Flags().StringVar(&dir, "into", "", "create the demo repository in `DIR` (must not exist; default: a new temporary directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print progress and the outcome as JSON lines")
	return cmd
}

func runDemo(ctx context.Context, g *Globals, into string, asJSON bool) error {
	repo, scriptPath, err := demo.Create(ctx, into)
	if err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(g.Stdout, "ralph demo: a scripted agent builds a landing page in %s\n\n", repo)
	}
	dg := *g
	dg.Dir = repo
	o := &RunOptions{json: asJSON}
	o.agent.Name = "script"
	o.agent.Script = scriptPath
	runErr := startTask(ctx, &dg, o, "Build a landing page for Tideline: a hero, three features and a call to action.")
	if runErr != nil && !asJSON {
		fmt.Fprintf(g.Stdout, "\nThe demo did not end as it should (see above); its repository is %s\n", repo)
	}
	if runErr == nil && !asJSON {
		demo.Explain(g.Stdout, repo)
	}
	return runErr
}

package cli

import (
	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/planreport"
)

func newPlanCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Validate, show and compare the plan in .ralph/plan.tsx",
		Long: `The plan is .ralph/plan.tsx: a small JSX tree the agent writes before it
builds. An app plan has <App> at its root (Theme, Screens, Sections built from
recipes); an orchestration plan has <Plan> (Phases of Steps, Human approvals,
Stop). ralph validates it at the top of every PLAN-phase iteration; these
commands run the same checks by hand.`,
	}
	cmd.AddCommand(newPlanValidateCommand(g), newPlanShowCommand(g), newPlanDiffCommand(g), newPlanUpdateCommand(g), newPlanLintConfigCommand(g))
	return cmd
}

func newPlanLintConfigCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "lint-config",
		Short: "Check ralph.toml, the recipe folders and the registries plans are checked against; exit 1 on a failure",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return planreport.LintConfig(cmd.Context(), g)
		},
	}
}

// PlanValidateOptions are the flags of ralph plan validate.
type PlanValidateOptions struct {
	JSON bool
}

// AddFlags registers the options' flags on cmd.
func (o *PlanValidateOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the findings as JSON")
}

func newPlanValidateCommand(g *Globals) *cobra.Command {
	var opts PlanValidateOptions
	cmd := &cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check the plan; exit 1 when it has failures",
		Long: `Check the plan (default .ralph/plan.tsx) and print one line per finding:

  FAIL [id] plan.tsx:LINE:COL: message
  WARN [id] plan.tsx:LINE:COL: message

failures first (LINE:COL is where the element, prop value or syntax error
is; a finding about the whole plan has no position). Exit 0 when there is no failure (warnings do not block),
1 when there is one. Recipe ids are those ralph recipe list shows for this
workspace; theme names are those ralph theme list shows.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return planreport.Validate(cmd.Context(), g, opts.JSON, firstArg(args))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// PlanShowOptions are the flags of ralph plan show.
type PlanShowOptions struct {
	JSON bool
}

// AddFlags registers the options' flags on cmd.
func (o *PlanShowOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the parsed tree as JSON")
}

func newPlanShowCommand(g *Globals) *cobra.Command {
	var opts PlanShowOptions
	cmd := &cobra.Command{
		Use:   "show [FILE]",
		Short: "Print the plan as an indented tree with props and change markers",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return planreport.Show(cmd.Context(), g, opts.JSON, firstArg(args))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// PlanDiffOptions are the flags of ralph plan diff.
type PlanDiffOptions struct {
	JSON bool
}

// AddFlags registers the options' flags on cmd.
func (o *PlanDiffOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the differences as JSON")
}

func newPlanDiffCommand(g *Globals) *cobra.Command {
	var opts PlanDiffOptions
	cmd := &cobra.Command{
		Use:   "diff [FILE]",
		Short: "Compare the plan's sections with the files under src/sections/",
		Long: `List the sections whose source file does not exist and the source files
under src/sections/ that no section names. A section's file is its file prop,
else src/sections/<Pascal(gumdrop)>Section.tsx (multi-step-wizard →
MultiStepWizardSection.tsx). The differences are information: the command
exits 0 either way.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return planreport.Diff(cmd.Context(), g, opts.JSON, firstArg(args))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

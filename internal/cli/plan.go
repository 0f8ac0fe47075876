package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
)

// defaultPlanFile is where the plan lives, relative to the workspace.
const defaultPlanFile = ".ralph/plan.tsx"

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
	cmd.AddCommand(newPlanValidateCommand(g), newPlanShowCommand(g), newPlanDiffCommand(g), newPlanUpdateCommand(g))
	return cmd
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
			return runPlanValidate(cmd.Context(), g, opts, firstArg(args))
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
			return runPlanShow(cmd.Context(), g, opts, firstArg(args))
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
			return runPlanDiff(cmd.Context(), g, opts, firstArg(args))
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

// readPlan reads the plan file named by arg (default .ralph/plan.tsx),
// resolved against the workspace dir. It returns the name errors and
// findings use, which is the file's base name.
func readPlan(g *Globals, arg string) (name string, src []byte, err error) {
	path := arg
	if path == "" {
		path = filepath.FromSlash(defaultPlanFile)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(g.Dir, path)
	}
	src, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && arg == "" {
		return "", nil, fmt.Errorf("no plan: %s does not exist (write the plan there, or name a file)", defaultPlanFile)
	}
	if err != nil {
		return "", nil, fmt.Errorf("read plan: %w", err)
	}
	return filepath.Base(path), src, nil
}

// planRegistries returns what plans are checked against: the recipes
// visible from the workspace and the theme engine's names, as the engine
// checks them at the top of a PLAN iteration.
func planRegistries(ctx context.Context, g *Globals) (plan.Registries, error) {
	lib, err := recipe.Load(ctx, g.Dir)
	if err != nil {
		return plan.Registries{}, fmt.Errorf("load recipes: %w", err)
	}
	return plancontext.Registries(lib), nil
}

func runPlanValidate(ctx context.Context, g *Globals, opts PlanValidateOptions, arg string) error {
	name, src, err := readPlan(g, arg)
	if err != nil {
		return err
	}
	reg, err := planRegistries(ctx, g)
	if err != nil {
		return err
	}
	_, res := plan.Check(name, src, reg)
	if opts.JSON {
		out := struct {
			File     string         `json:"file"`
			Valid    bool           `json:"valid"`
			Failures []plan.Finding `json:"failures"`
			Warnings []plan.Finding `json:"warnings"`
		}{name, res.OK(), nonNil(res.Failures), nonNil(res.Warnings)}
		if err := writeJSON(g.Stdout, out); err != nil {
			return err
		}
	} else {
		for _, f := range res.Failures {
			fmt.Fprintln(g.Stdout, f.Format("FAIL", name))
		}
		for _, f := range res.Warnings {
			fmt.Fprintln(g.Stdout, f.Format("WARN", name))
		}
		switch {
		case !res.OK():
			fmt.Fprintf(g.Stdout, "%s: %s, %s\n", name, plural(len(res.Failures), "failure"), plural(len(res.Warnings), "warning"))
		case len(res.Warnings) > 0:
			fmt.Fprintf(g.Stdout, "%s: valid, %s\n", name, plural(len(res.Warnings), "warning"))
		default:
			fmt.Fprintf(g.Stdout, "%s: valid\n", name)
		}
	}
	if !res.OK() {
		return failure.New(failure.Failed, nil)
	}
	return nil
}

func nonNil(fs []plan.Finding) []plan.Finding {
	if fs == nil {
		return []plan.Finding{}
	}
	return fs
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// parsePlan reads and parses the plan; a syntax error exits 1 with its
// position.
func parsePlan(g *Globals, arg string) (*plan.Node, error) {
	name, src, err := readPlan(g, arg)
	if err != nil {
		return nil, err
	}
	root, err := plan.ParseFile(name, src)
	if err != nil {
		return nil, failure.New(failure.Failed, err)
	}
	return root, nil
}

func runPlanShow(_ context.Context, g *Globals, opts PlanShowOptions, arg string) error {
	root, err := parsePlan(g, arg)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(g.Stdout, root)
	}
	var b strings.Builder
	showNode(&b, root, 0)
	_, err = io.WriteString(g.Stdout, b.String())
	return err
}

// showNode writes n as an indented tree: a line-number gutter, the
// component with its props in source order, its markers, its text.
func showNode(b *strings.Builder, n *plan.Node, depth int) {
	indent := strings.Repeat("  ", depth)
	names := make([]string, 0, len(n.Props))
	for k := range n.Props {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		a, c := n.Props[names[i]], n.Props[names[j]]
		if a.Line != c.Line {
			return a.Line < c.Line
		}
		return a.Col < c.Col
	})
	fmt.Fprintf(b, "%4d  %s%s", n.Line, indent, n.Component)
	for _, k := range names {
		fmt.Fprintf(b, " %s=%s", k, n.Props[k])
	}
	b.WriteByte('\n')
	for _, m := range n.Markers {
		count := ""
		if m.Count > 0 {
			count = fmt.Sprintf(" (count %d)", m.Count)
		}
		fmt.Fprintf(b, "%4d  %s  » %s%s\n", m.Line, indent, m, count)
	}
	if n.Text != "" {
		for _, l := range strings.Split(n.Text, "\n") {
			fmt.Fprintf(b, "      %s  | %s\n", indent, l)
		}
	}
	for _, c := range n.Children {
		showNode(b, c, depth+1)
	}
}

func runPlanDiff(_ context.Context, g *Globals, opts PlanDiffOptions, arg string) error {
	root, err := parsePlan(g, arg)
	if err != nil {
		return err
	}
	d, err := plan.Diff(root, g.Dir)
	if err != nil {
		return err
	}
	if opts.JSON {
		type missing struct {
			File    string `json:"file"`
			Gumdrop string `json:"gumdrop,omitempty"`
			Line    int    `json:"line"`
		}
		out := struct {
			Missing   []missing `json:"missing"`
			Unplanned []string  `json:"unplanned"`
		}{Missing: []missing{}, Unplanned: []string{}}
		for _, m := range d.Missing {
			out.Missing = append(out.Missing, missing{m.File, m.Section.Str("gumdrop"), m.Section.Line})
		}
		out.Unplanned = append(out.Unplanned, d.Unplanned...)
		return writeJSON(g.Stdout, out)
	}
	for _, m := range d.Missing {
		fmt.Fprintf(g.Stdout, "missing    %s  (<Section gumdrop=%q> at line %d has no source file)\n", m.File, m.Section.Str("gumdrop"), m.Section.Line)
	}
	for _, f := range d.Unplanned {
		fmt.Fprintf(g.Stdout, "unplanned  %s  (no section in the plan names it)\n", f)
	}
	if d.Empty() {
		fmt.Fprintf(g.Stdout, "plan and %s/ agree\n", plan.SectionsDir)
	}
	return nil
}

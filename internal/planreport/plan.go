// Package planreport reports on a plan file by hand, as ralph plan
// validate, show, diff and update do: the checks the engine runs at the
// top of a PLAN iteration, the parsed tree, the plan against the sections
// on disk, and the context for updating it.
package planreport

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

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/session"
)

// Globals is what every command works with (streams, directory, logger).
type Globals = session.Globals

// defaultPlanFile is where the plan lives, relative to the workspace.
const defaultPlanFile = ".ralph/plan.tsx"

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
	src, err = readRegular(path)
	if errors.Is(err, fs.ErrNotExist) && arg == "" {
		return "", nil, fmt.Errorf("no plan: %s does not exist (write the plan there, or name a file)", defaultPlanFile)
	}
	if err != nil {
		return "", nil, fmt.Errorf("read plan: %w", err)
	}
	return filepath.Base(path), src, nil
}

// maxInput bounds a plan or task file read by hand.
const maxInput = 16 << 20

// readRegular reads path when it is a regular file (links followed) of at
// most maxInput bytes: a FIFO or a device would block or never end.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		kind := "not a regular file"
		switch t := fi.Mode().Type(); {
		case t&fs.ModeDir != 0:
			kind = "a directory"
		case t&fs.ModeNamedPipe != 0:
			kind = "a named pipe (FIFO)"
		case t&fs.ModeDevice != 0 || t&fs.ModeCharDevice != 0:
			kind = "a device"
		case t&fs.ModeSocket != 0:
			kind = "a socket"
		}
		return nil, fmt.Errorf("%s is %s, not a file to read", path, kind)
	}
	if fi.Size() > maxInput {
		return nil, fmt.Errorf("%s is %d bytes, more than a plan or task file may be (%d)", path, fi.Size(), maxInput)
	}
	return os.ReadFile(path)
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

// Validate checks the plan file arg (default .ralph/plan.tsx) as ralph
// plan validate does and prints its findings; an invalid plan is a
// failure.Failed error.
func Validate(ctx context.Context, g *Globals, asJSON bool, arg string) error {
	name, src, err := readPlan(g, arg)
	if err != nil {
		return err
	}
	reg, err := planRegistries(ctx, g)
	if err != nil {
		return err
	}
	_, res := plan.Check(name, src, reg)
	if asJSON {
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

// HandedIn reads and checks the plan handed to ralph run --plan FILE
// before anything of the run starts, as the engine checks a plan at the
// top of a PLAN iteration. A valid plan's content is returned, its
// warnings printed; an invalid one prints each finding at FILE:LINE:COL
// on standard error and is a usage error (exit 2): nothing was started.
func HandedIn(ctx context.Context, g *Globals, arg string) ([]byte, error) {
	name, src, err := readPlan(g, arg)
	if err != nil {
		return nil, failure.New(failure.Usage, fmt.Errorf("--plan: %w", err))
	}
	reg, err := planRegistries(ctx, g)
	if err != nil {
		return nil, err
	}
	_, res := plan.Check(name, src, reg)
	for _, f := range res.Failures {
		fmt.Fprintln(g.Stderr, f.Format("FAIL", name))
	}
	for _, f := range res.Warnings {
		fmt.Fprintln(g.Stderr, f.Format("WARN", name))
	}
	if !res.OK() {
		return nil, failure.New(failure.Usage, fmt.Errorf("--plan %s is not valid (%s); no task was started", arg, plural(len(res.Failures), "failure")))
	}
	return src, nil
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

// Show prints the plan file arg as an indented tree, or as JSON.
func Show(_ context.Context, g *Globals, asJSON bool, arg string) error {
	root, err := parsePlan(g, arg)
	if err != nil {
		return err
	}
	if asJSON {
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

// Diff prints what the plan file arg and the sections on disk disagree
// on.
func Diff(_ context.Context, g *Globals, asJSON bool, arg string) error {
	root, err := parsePlan(g, arg)
	if err != nil {
		return err
	}
	d, err := plan.Diff(root, g.Dir)
	if err != nil {
		return err
	}
	if asJSON {
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

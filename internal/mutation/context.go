package mutation

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// Context returns what `ralph plan update` prints for a mutation task: the
// plan's theme, screens and sections with their source files and current
// markers; the requirements of task.md, each with the elements it most
// likely changes (Affected) and the marker that carries it, if any; the
// PRESERVE and AFFECTED FILES lines mapped to sections the same way; and
// what Validate would still warn about (without the previous plan).
func Context(root *plan.Node, t task.Task) string {
	var b strings.Builder
	n := t.Counter
	num := "N"
	if n > 0 {
		num = strconv.Itoa(n)
	}
	title := t.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(&b, "# Plan update for task %s: %s\n\n", num, title)
	typ := t.Route()
	if typ == "" {
		typ = task.Pending
	}
	fmt.Fprintf(&b, "Type: %s. ", typ)
	if typ == task.Mutation {
		fmt.Fprintf(&b, "Update .ralph/plan.tsx in place: mark each change {/* TASK-%s [ADD|MODIFY|FIX|REMOVE]: … */}, what must stay {/* … PRESERVED … */}, and untouched sections {/* NO CHANGES for task-%s */}.\n", num, num)
	} else {
		b.WriteString("Plan updates with change markers are for mutation tasks; this listing is for reference.\n")
	}

	b.WriteString("\n## The plan now\n\n")
	writeTree(&b, root)

	targets := Targets(root)
	marks := taskMarkers(root, n, targets)
	perKind := map[task.Kind]int{}
	for _, r := range t.Requirements {
		if concrete(r) {
			perKind[r.Kind]++
		}
	}
	b.WriteString("\n## Requirements (task.md)\n\n")
	i := 0
	for _, r := range t.Requirements {
		if !concrete(r) {
			continue
		}
		i++
		fmt.Fprintf(&b, "%d. %s\n", i, requirementString(r))
		writeMatch(&b, match(r, targets, t.AffectedFiles))
		if m, ok := carrier(r, marks, perKind[r.Kind]); ok {
			fmt.Fprintf(&b, "   marked: line %d: %s\n", m.m.Line, m.m)
		} else {
			fmt.Fprintf(&b, "   marked: not yet\n")
		}
	}
	if i == 0 {
		b.WriteString("task.md lists no requirement yet: decompose the Original Message into [ADD], [MODIFY], [FIX] and [REMOVE] items first.\n")
	}

	var preserve, files []string
	for _, p := range t.Preserve {
		if p = strings.TrimSpace(p); p != "" && p != task.Placeholder {
			preserve = append(preserve, p)
		}
	}
	for _, f := range t.AffectedFiles {
		if f = strings.TrimSpace(f); f != "" && f != task.Placeholder {
			files = append(files, f)
		}
	}
	if len(preserve)+len(files) > 0 {
		b.WriteString("\n## Scope (task.md)\n\n")
		for _, p := range preserve {
			fmt.Fprintf(&b, "- PRESERVE: %s\n", p)
			m := match(task.Requirement{Text: p}, sectionsOnly(targets), nil)
			writeMatch(&b, m)
		}
		for _, f := range files {
			var hits []string
			for _, t := range targets {
				if fileListed(t.File, []string{f}) {
					hits = append(hits, t.String())
				}
			}
			if len(hits) == 0 {
				fmt.Fprintf(&b, "- AFFECTED FILE: %s → no section of the plan names it\n", f)
				continue
			}
			fmt.Fprintf(&b, "- AFFECTED FILE: %s → %s\n", f, strings.Join(hits, "; "))
		}
	}

	b.WriteString("\n## Still to do\n\n")
	res := Validate(root, nil, t, n)
	findings := append(append([]plan.Finding(nil), res.Failures...), res.Warnings...)
	if len(findings) == 0 {
		fmt.Fprintf(&b, "Every requirement has a TASK-%s marker.\n", num)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "%s\n", findingLine("FAIL", f))
	}
	for _, f := range res.Warnings {
		fmt.Fprintf(&b, "%s\n", findingLine("WARN", f))
	}
	var unmarked []string
	for _, tg := range targets {
		if tg.screenNode != nil && !hasMarker(root, tg, n) {
			unmarked = append(unmarked, tg.String())
		}
	}
	if len(unmarked) > 0 {
		fmt.Fprintf(&b, "Sections with no marker for task %s (mark them NO CHANGES if the task leaves them alone):\n", num)
		for _, u := range unmarked {
			fmt.Fprintf(&b, "- %s\n", u)
		}
	}
	return b.String()
}

func findingLine(kind string, f plan.Finding) string {
	return f.Format(kind, plan.DefaultFile)
}

// sectionsOnly drops the theme from targets.
func sectionsOnly(targets []Target) []Target {
	var out []Target
	for _, t := range targets {
		if t.screenNode != nil {
			out = append(out, t)
		}
	}
	return out
}

// hasMarker reports whether section target t, or an element enclosing it,
// has a marker for task n (a marker without a task number counts).
func hasMarker(root *plan.Node, t Target, n int) bool {
	for _, node := range plan.Path(root, t.Node) {
		if node == root {
			continue
		}
		for _, m := range node.Markers {
			if m.Task == n || m.Task == 0 {
				return true
			}
		}
	}
	return false
}

func writeMatch(b *strings.Builder, m Match) {
	if len(m.Targets) == 0 {
		b.WriteString("   likely: no section shares a word with it; pick one, or add a new <Section> with an [ADD] marker\n")
		return
	}
	for _, t := range m.Targets {
		fmt.Fprintf(b, "   likely: %s (line %d)\n", t, t.Node.Line)
	}
	fmt.Fprintf(b, "   matched words: %s\n", strings.Join(m.Words, ", "))
}

// writeTree lists the plan's root, theme, screens and sections with their
// lines, files and markers.
func writeTree(b *strings.Builder, root *plan.Node) {
	if root == nil {
		b.WriteString("(empty plan)\n")
		return
	}
	fmt.Fprintf(b, "%s%s (line %d)\n", root.Component, nameSuffix(root), root.Line)
	writeMarkers(b, "  ", root.Markers)
	if th := plan.Theme(root); th != nil {
		fmt.Fprintf(b, "  Theme%s (line %d)\n", propList(th, "mood", "preset", "seed", "pattern", "font"), th.Line)
		th.Walk(func(n *plan.Node) bool {
			writeMarkers(b, "    ", n.Markers)
			return true
		})
	}
	for _, scr := range plan.Collect(root, "Screen") {
		fmt.Fprintf(b, "  Screen %q (line %d)\n", scr.Str("name"), scr.Line)
		writeMarkers(b, "    ", scr.Markers)
		for _, c := range scr.Children {
			if c.Component == "Content" {
				writeMarkers(b, "    ", c.Markers)
			}
		}
		for _, s := range plan.ScreenSections(scr) {
			t := sectionTarget(scr, s)
			fmt.Fprintf(b, "    - %s%s (line %d) → %s\n", t.Label, propList(s, "variant", "cols", "title"), s.Line, orNone(t.File))
			writeMarkers(b, "        ", s.Markers)
		}
	}
}

func nameSuffix(n *plan.Node) string {
	if name := n.Str("name"); name != "" {
		return fmt.Sprintf(" %q", name)
	}
	return ""
}

// propList renders the named props n has, in the order given.
func propList(n *plan.Node, names ...string) string {
	var parts []string
	for _, name := range names {
		if v, ok := n.Prop(name); ok {
			parts = append(parts, name+"="+v.String())
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

func orNone(file string) string {
	if file == "" {
		return "(no file: give it a gumdrop or a file prop)"
	}
	return file
}

func writeMarkers(b *strings.Builder, indent string, ms []plan.Marker) {
	for _, m := range ms {
		count := ""
		if m.Count > 0 {
			count = fmt.Sprintf(" (%d items)", m.Count)
		}
		fmt.Fprintf(b, "%s» line %d: %s%s\n", indent, m.Line, m, count)
	}
}

package plancontext

import (
	"fmt"
	"strings"
)

// Format renders c as the body of the build instructions: the theme as
// applied (or why it was not), the sections in order with their files,
// components and recipes, the steps of an orchestration plan, and the
// harness's notes. The caller writes the heading above it and the plan
// warnings and closing instructions below it, so Format writes neither.
func Format(c Context) string {
	var b strings.Builder
	writeTheme(&b, c.Theme)
	if len(c.Sections) > 0 {
		b.WriteString("\n## Sections, in order\n\n")
		b.WriteString("Build one file per section, in this order, each with the recipe below it. The recipes are here in full: there is nothing to search for.\n\n")
		b.WriteString("Put `data-section=\"<recipe id>\"` on each section's root element (`<section data-section=\"hero\">`): the ui-renders gate loads every screen in a browser at 1280×800 and 390×844 (a <Screen> at its path prop, else the first at / and each other at /<name>) and finds each planned section by it. It also fails on errors in the console, a blank page, text below WCAG AA contrast and a page wider than a phone; its screenshots go to `.ralph/preview/`.\n")
		for i, s := range c.Sections {
			writeSection(&b, i+1, s)
		}
	}
	if len(c.Steps) > 0 {
		b.WriteString("\n## Steps, in order\n\n")
		for i, s := range c.Steps {
			fmt.Fprintf(&b, "%d. ", i+1)
			if s.Phase != "" {
				fmt.Fprintf(&b, "[%s] ", s.Phase)
			}
			switch s.Kind {
			case "Human":
				fmt.Fprintf(&b, "human approval: %s\n", s.Name)
			case "Stop":
				fmt.Fprintf(&b, "stop: %s\n", s.Name)
			default:
				b.WriteString(s.Name)
				if s.Summary != "" {
					b.WriteString(": " + s.Summary)
				}
				b.WriteString("\n")
			}
		}
	}
	if len(c.Warnings) > 0 {
		b.WriteString("\n## Notes from the harness\n\n")
		for _, w := range c.Warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	out := strings.TrimSpace(b.String())
	if out == "" {
		return ""
	}
	return out + "\n"
}

func writeTheme(b *strings.Builder, t ThemeResult) {
	switch {
	case t.Applied:
		b.WriteString("## Theme applied ✓\n\n")
		fmt.Fprintf(b, "The harness applied the <Theme> from your plan to %s. It is the same as running:\n\n", code(t.Stylesheet))
		fmt.Fprintf(b, "    %s\n\n", t.Command)
		if out := strings.TrimSpace(t.Output); out != "" {
			b.WriteString("which printed:\n\n")
			for _, l := range strings.Split(out, "\n") {
				fmt.Fprintf(b, "    %s\n", l)
			}
			b.WriteString("\n")
		}
		if len(t.Defaults) > 0 {
			fmt.Fprintf(b, "Your <Theme> left some settings out, so the harness chose them: %s.\n\n", strings.Join(t.Defaults, ", "))
		}
		b.WriteString("The theme is set. Do not run `ralph theme preset` or `ralph theme generate` again, and do not edit the theme block in the stylesheet by hand; refine it with `ralph theme modify --shift-hue DEG --apply`. Use the theme tokens (bg-background, text-foreground, bg-primary, …), never literal colours.\n")
	case t.Error != "":
		b.WriteString("## Theme ⚠ not applied\n\n")
		fmt.Fprintf(b, "The harness could not apply the <Theme> from your plan: %s.\n", strings.TrimSuffix(t.Error, "."))
		if t.Command != "" {
			fmt.Fprintf(b, "\nIt tried the equivalent of `%s`.\n", t.Command)
		}
		fmt.Fprintf(b, "\nApply a theme yourself, once, before building: `ralph theme preset NAME --apply` or `ralph theme generate --seed HUE --pattern PATTERN [--mood MOOD] --apply` (`ralph theme list` shows the names). It goes into %s.\n", code(t.Stylesheet))
	}
}

func writeSection(b *strings.Builder, i int, s SectionContext) {
	fmt.Fprintf(b, "\n### %d. %s", i, s.Gumdrop)
	if s.Variant != "" {
		fmt.Fprintf(b, " (variant: %s)", s.Variant)
	}
	if s.File != "" {
		fmt.Fprintf(b, " → %s", code(s.File))
	}
	b.WriteString("\n\n")
	fmt.Fprintf(b, "**Root element:** `data-section=%q`\n\n", s.Gumdrop)
	if len(s.Components) > 0 {
		fmt.Fprintf(b, "**Components:** %s\n\n", strings.Join(s.Components, ", "))
	}
	if s.Found {
		if body := demoteHeadings(s.Recipe, 2); body != "" {
			b.WriteString(body + "\n")
		}
		return
	}
	fmt.Fprintf(b, "No recipe found for %q. Build it from shadcn/ui components and the theme tokens.\n", s.Gumdrop)
}

func code(s string) string { return "`" + s + "`" }

// demoteHeadings pushes markdown headings down by n levels (to at most
// six), so that a recipe's "## Layout" sits under its section's "###"
// heading. Lines inside fenced code blocks are left alone.
func demoteHeadings(md string, n int) string {
	lines := strings.Split(strings.TrimSpace(md), "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if len(t) < len(l) {
			continue // indented: not a heading we own
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level == 0 || level > 6 || (len(l) > level && l[level] != ' ') {
			continue
		}
		lines[i] = strings.Repeat("#", min(6, level+n)) + l[level:]
	}
	return strings.Join(lines, "\n")
}

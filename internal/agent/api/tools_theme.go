package api

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/theme"
)

// themeToolDefs are the tools over ralph's theme engine.
var themeToolDefs = []toolDef{
	{
		Name:        "theme_modify",
		Description: "Rotate every hue of the workspace's last applied theme by shift_hue degrees and write it into the stylesheet, like `ralph theme modify --shift-hue DEG --apply`. Contrast stays WCAG AA. Needs a theme applied before (recorded in .ralph/theme.json).",
		Properties: map[string]any{
			"shift_hue": number("degrees to rotate every hue by, e.g. 30 or -45"),
		},
		Required: []string{"shift_hue"},
	},
	{
		Name:        "theme_list",
		Description: "List the theme presets, moods, harmony patterns and curated fonts ralph's theme engine knows, and the theme applied to the workspace, if any.",
		Properties:  map[string]any{},
	},
}

// themeModify rebuilds the recorded theme with its hues rotated by shift
// and applies it. Like `ralph theme modify`, it writes to the stylesheet
// the theme was applied to, else to the configured one.
func (t *toolbox) themeModify(shift *float64) (string, error) {
	if shift == nil {
		return "", errors.New("shift_hue is missing: give the degrees to rotate every hue by")
	}
	rec, err := t.themeRecord()
	if err != nil {
		return "", err
	}
	sheet := rec.Stylesheet
	if sheet == "" {
		sheet = t.stylesheet
	}
	rel, err := t.stylesheetRel(sheet)
	if err != nil {
		return "", err
	}
	req := rec.Request
	req.ShiftHue += *shift
	res, err := theme.ApplyRequest(t.ws.root, rel, req)
	if err != nil {
		return "", fmt.Errorf("theme_modify: %v", err)
	}
	return fmt.Sprintf("Command: %s\n%s", res.Command, res.Output), nil
}

// themeRecord reads the workspace's last applied theme.
func (t *toolbox) themeRecord() (theme.Record, error) {
	path, err := t.ws.resolve(theme.RecordFile)
	if err != nil {
		return theme.Record{}, err
	}
	rec, err := theme.LoadRecord(path)
	if errors.Is(err, theme.ErrNoRecord) {
		return rec, fmt.Errorf("no theme has been applied to this workspace yet (%s is missing): theme_modify changes an applied theme; a plan's <Theme> or `ralph theme preset NAME --apply` applies one", theme.RecordFile)
	}
	return rec, err
}

// stylesheetRel returns sheet relative to the workspace root, refusing a
// stylesheet outside the workspace. An empty sheet is
// theme.DefaultStylesheet.
func (t *toolbox) stylesheetRel(sheet string) (string, error) {
	if sheet == "" {
		sheet = theme.DefaultStylesheet
	}
	rel := sheet
	if filepath.IsAbs(sheet) {
		rel = t.ws.rel(sheet)
	}
	if _, err := t.ws.resolve(rel); err != nil {
		return "", fmt.Errorf("stylesheet %s: %v", sheet, err)
	}
	return rel, nil
}

func (t *toolbox) themeList() (string, error) {
	var b strings.Builder
	section := func(title string) { fmt.Fprintf(&b, "%s:\n", title) }
	row := func(name, desc string) { fmt.Fprintf(&b, "  %s: %s\n", name, desc) }
	section("Presets")
	for _, p := range theme.Presets() {
		row(p.Name, p.Description)
	}
	section("Moods")
	for _, m := range theme.Moods() {
		row(m.Name, m.Description)
	}
	section("Patterns")
	for _, p := range theme.Patterns() {
		row(p.Name, p.Description)
	}
	section("Fonts")
	for _, cat := range []string{theme.Sans, theme.Serif, theme.Mono} {
		var names []string
		for _, f := range theme.CuratedFonts() {
			if f.Category == cat {
				names = append(names, f.Name)
			}
		}
		row(cat, strings.Join(names, ", "))
	}
	if rec, err := t.themeRecord(); err == nil {
		sheet := rec.Stylesheet
		if sheet == "" {
			sheet = t.stylesheet
		}
		fmt.Fprintf(&b, "Applied: ralph %s (in %s)\n", theme.CommandLine(rec.Request.Argv(true)), sheet)
	} else {
		b.WriteString("Applied: none yet\n")
	}
	return b.String(), nil
}

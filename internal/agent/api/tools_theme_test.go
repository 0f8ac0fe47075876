package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/theme"
)

// primary returns the light-mode --primary declaration of the stylesheet.
func primary(t *testing.T, path string) string {
	t.Helper()
	css, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(css), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--primary:") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("no --primary in %s:\n%s", path, css)
	return ""
}

// theme_modify rotates the applied preset and rewrites only the theme
// block of the stylesheet, recording the new request.
func TestThemeModify(t *testing.T) {
	tb, dir := newToolbox(t)
	out, err := call(t, tb, "theme_modify", map[string]any{"shift_hue": 30})
	wantErr(t, out, err, "no theme has been applied to this workspace yet")

	const rest = "@import \"tailwindcss\";\n\nbody { margin: 0; }\n"
	write(t, dir, theme.DefaultStylesheet, rest)
	preset := theme.Presets()[0].Name
	if _, err := theme.ApplyRequest(dir, theme.DefaultStylesheet, theme.Request{Preset: preset}); err != nil {
		t.Fatal(err)
	}
	sheet := filepath.Join(dir, theme.DefaultStylesheet)
	before := primary(t, sheet)

	out, err = call(t, tb, "theme_modify", map[string]any{"shift_hue": 120})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Command: ralph theme preset " + preset + " --shift-hue 120 --apply\n"; !strings.HasPrefix(out, want) {
		t.Errorf("output does not start with %q:\n%s", want, out)
	}
	if !strings.Contains(out, "shifted by 120°") || !strings.Contains(out, "to "+theme.DefaultStylesheet) {
		t.Errorf("output:\n%s", out)
	}
	after := primary(t, sheet)
	if after == before {
		t.Errorf("--primary did not change: %s", after)
	}
	css, _ := os.ReadFile(sheet)
	if !strings.HasPrefix(string(css), rest) || strings.Count(string(css), theme.StartMarker) != 1 {
		t.Errorf("the rest of the stylesheet changed:\n%s", css)
	}
	rec, err := theme.LoadRecord(filepath.Join(dir, theme.RecordFile))
	if err != nil || rec.Request.ShiftHue != 120 || rec.Stylesheet != theme.DefaultStylesheet {
		t.Errorf("record %+v, %v", rec, err)
	}

	// Shifts add up; a full turn back lands on the first theme.
	if _, err := call(t, tb, "theme_modify", map[string]any{"shift_hue": 240}); err != nil {
		t.Fatal(err)
	}
	if got := primary(t, sheet); got != before {
		t.Errorf("after a full turn --primary = %s, want %s", got, before)
	}

	out, err = call(t, tb, "theme_modify", map[string]any{})
	wantErr(t, out, err, "shift_hue is missing")
	out, err = call(t, tb, "theme_modify", map[string]any{"shift_hue": "thirty"})
	wantErr(t, out, err, "invalid input")
}

// A recorded stylesheet wins over the configured one; with none recorded
// the configured one is used, and one outside the workspace is refused.
func TestThemeModifyStylesheet(t *testing.T) {
	tb, dir := newToolbox(t)
	tb.stylesheet = "app/styles.css"
	preset := theme.Presets()[0].Name
	if _, err := theme.ApplyRequest(dir, "web/main.css", theme.Request{Preset: preset}); err != nil {
		t.Fatal(err)
	}
	if out, err := call(t, tb, "theme_modify", map[string]any{"shift_hue": 10}); err != nil || !strings.Contains(out, "to web/main.css") {
		t.Errorf("recorded stylesheet: %v\n%s", err, out)
	}

	if err := theme.SaveRecord(filepath.Join(dir, theme.RecordFile), theme.Record{Request: theme.Request{Preset: preset}}); err != nil {
		t.Fatal(err)
	}
	if out, err := call(t, tb, "theme_modify", map[string]any{"shift_hue": 10}); err != nil || !strings.Contains(out, "to app/styles.css") {
		t.Errorf("configured stylesheet: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "app/styles.css")); err != nil {
		t.Error(err)
	}

	outside := filepath.Join(t.TempDir(), "outside.css")
	if err := theme.SaveRecord(filepath.Join(dir, theme.RecordFile), theme.Record{Request: theme.Request{Preset: preset}, Stylesheet: outside}); err != nil {
		t.Fatal(err)
	}
	out, err := call(t, tb, "theme_modify", map[string]any{"shift_hue": 10})
	wantErr(t, out, err, "leaves the workspace")
	if _, err := os.Stat(outside); err == nil {
		t.Error("theme_modify wrote outside the workspace")
	}
}

func TestThemeList(t *testing.T) {
	tb, dir := newToolbox(t)
	out, err := call(t, tb, "theme_list", nil)
	if err != nil {
		t.Fatal(err)
	}
	preset, mood, pattern := theme.Presets()[0], theme.Moods()[0], theme.Patterns()[0]
	for _, want := range []string{"Presets:\n", "  " + preset.Name + ": " + preset.Description, "Moods:\n", "  " + mood.Name + ": ",
		"Patterns:\n", "  " + pattern.Name + ": ", "Fonts:\n", "  sans: Inter, ", "Applied: none yet"} {
		if !strings.Contains(out, want) {
			t.Errorf("theme_list does not say %q:\n%s", want, out)
		}
	}
	if _, err := theme.ApplyRequest(dir, "", theme.Request{Preset: preset.Name, ShiftHue: 15}); err != nil {
		t.Fatal(err)
	}
	out, _ = call(t, tb, "theme_list", nil)
	if want := "Applied: ralph theme preset " + preset.Name + " --shift-hue 15 --apply (in src/index.css)"; !strings.Contains(out, want) {
		t.Errorf("theme_list does not say %q:\n%s", want, out)
	}
}

package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/theme"
)

const themedPlan = `<App name="Shop" description="A shop">
  <Theme mood="mono" />
  <Screen name="home"><Section gumdrop="hero" /></Screen>
</App>
`

const themelessPlan = `<Plan name="chores"><Step name="tidy">Tidy up.</Step></Plan>`

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropDarkToken removes the declaration of token from the .dark block.
func dropDarkToken(t *testing.T, css, token string) string {
	t.Helper()
	i := strings.Index(css, ".dark {")
	decl := "\n  --" + token + ":"
	j := strings.Index(css[i:], decl)
	if i < 0 || j < 0 {
		t.Fatalf("no .dark --%s in the theme", token)
	}
	start := i + j
	end := start + 1 + strings.Index(css[start+1:], "\n")
	return css[:start] + css[end:]
}

func TestCSSThemeComplete(t *testing.T) {
	th, err := theme.Preset("mono")
	if err != nil {
		t.Fatal(err)
	}
	full := "@import \"tailwindcss\";\n\n" + th.CSS() + "\n\nbody { margin: 0; }\n"
	yes := func() bool { return true }
	no := func() bool { return false }
	tests := []struct {
		name   string
		files  map[string]string
		gate   CSSThemeComplete
		status Status
		msg    string
	}{
		{"complete theme", map[string]string{"src/index.css": full}, CSSThemeComplete{}, Pass, "all"},
		{"complete theme in a configured stylesheet", map[string]string{"app/globals.css": full},
			CSSThemeComplete{Stylesheet: "app/globals.css", Expected: yes}, Pass, "app/globals.css"},
		{"dark token missing", map[string]string{"src/index.css": dropDarkToken(t, full, "primary")},
			CSSThemeComplete{}, Fail, "missing 1 theme tokens (0 in light :root, 1 in dark .dark): .dark --primary"},
		{"dark block gone", map[string]string{"src/index.css": full[:strings.Index(full, ".dark {")] + theme.EndMarker + "\n"},
			CSSThemeComplete{}, Fail, "in dark .dark"},
		{"no stylesheet, no plan: not a UI project", nil, CSSThemeComplete{}, Skip, "no theme in this project"},
		{"no stylesheet, orchestration plan", map[string]string{".ralph/plan.tsx": themelessPlan}, CSSThemeComplete{}, Skip, "no theme in this project"},
		{"no stylesheet, plan has a Theme", map[string]string{".ralph/plan.tsx": themedPlan}, CSSThemeComplete{}, Fail, "does not exist"},
		{"no stylesheet, theme applied before", map[string]string{theme.RecordFile: `{"request":{"preset":"mono"}}`}, CSSThemeComplete{}, Fail, "does not exist"},
		{"no stylesheet, engine expects a theme", nil, CSSThemeComplete{Expected: yes}, Fail, "src/index.css does not exist"},
		{"engine expects none over a themed plan", map[string]string{".ralph/plan.tsx": themedPlan}, CSSThemeComplete{Expected: no}, Skip, "no theme"},
		{"plain stylesheet, no theme expected", map[string]string{"src/index.css": "body { color: red; }\n"}, CSSThemeComplete{}, Skip, "declares no theme tokens"},
		{"plain stylesheet, theme expected", map[string]string{"src/index.css": "body { color: red; }\n", ".ralph/plan.tsx": themedPlan},
			CSSThemeComplete{}, Fail, "and " /* … and N more */},
		{"hand-written shadcn tokens without radius or shadows", map[string]string{"src/index.css": ":root { --background: white; }\n.dark { --background: black; }\n"},
			CSSThemeComplete{}, Fail, ":root --foreground"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range tt.files {
				writeFile(t, root, rel, content)
			}
			r := tt.gate.Check(context.Background(), Env{Root: root})
			if r.Status != tt.status || !strings.Contains(r.Message, tt.msg) {
				t.Fatalf("got %s %q, want %s containing %q", r.Status, r.Message, tt.status, tt.msg)
			}
			if r.Status == Fail && !strings.Contains(r.Fix, "ralph theme") {
				t.Errorf("fix %q names no command", r.Fix)
			}
			if (&tt.gate).Name() != "css-theme-complete" {
				t.Error("name")
			}
		})
	}
}

func TestCSSThemeCompleteAfterRealApply(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "src/index.css", "@import \"tailwindcss\";\n")
	if _, err := theme.ApplyRequest(root, "", theme.Request{Generate: theme.GenerateOptions{Seed: 40, Pattern: "goldenRatio", Mood: "luxury"}}); err != nil {
		t.Fatal(err)
	}
	g := &CSSThemeComplete{}
	if r := g.Check(context.Background(), Env{Root: root}); r.Status != Pass {
		t.Fatalf("after apply: %s %q", r.Status, r.Message)
	}
	// Someone deletes the generated block: the record says a theme is
	// expected, so the gate fails even without a plan.
	writeFile(t, root, "src/index.css", "@import \"tailwindcss\";\n")
	if r := g.Check(context.Background(), Env{Root: root}); r.Status != Fail {
		t.Fatalf("after deleting the block: %s %q", r.Status, r.Message)
	}
}

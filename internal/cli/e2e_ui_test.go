package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// The ui-renders gate with the real Claude Code (issue 30): the fake
// model builds a page whose lead text is light grey on white; the gate
// loads it in Chromium and holds the task; the model reads feedback.md,
// finds the contrast finding with the element, both colours, the ratio
// and the screenshots, fixes the colour, and the task completes.
func TestE2EClaudeFixesContrast(t *testing.T) {
	e2eShort(t)
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CI") == "" {
		t.Skip("no Chromium (scripts/install-chromium.sh installs it)")
	}
	t.Parallel()
	dir := testutil.GitRepo(t)
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	const (
		plan = `<App name="Tideline">
  <Theme mood="mono" />
  <Screen name="home">
    <Section gumdrop="hero" />
  </Screen>
</App>
`
		page = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Tideline</title></head>
  <body><div id="root"></div><script type="module" src="/src/main.ts"></script></body>
</html>
`
		main = "import './index.css'\nimport './app.css'\n\ndocument.getElementById('root')!.innerHTML =\n  '<section data-section=\"hero\"><h1>Tideline</h1><p class=\"lead\">Tide tables for every harbour</p></section>'\n"
		grey = "body { margin: 0; font-family: sans-serif; background: #ffffff; color: #111111; }\nsection { padding: 24px; }\n.lead { color: #cccccc; }\n"
		dark = "body { margin: 0; font-family: sans-serif; background: var(--background); color: var(--foreground); }\nsection { padding: 24px; border-bottom: 1px solid var(--border); }\nh1 { color: var(--primary); }\n.lead { color: var(--muted-foreground); }\n"
		done = "printf 'Built the Tideline hero.\\n' > .ralph/summary.md && printf complete > .ralph/status.txt"
	)
	srv := testutil.NewAnthropic(t,
		// Iteration 1 (PLAN).
		testutil.Calls("I will write the plan.", testutil.WriteFile(abs(".ralph/plan.tsx"), plan)),
		testutil.Text("I wrote the plan."),
		// Iteration 2 (BUILD): the page, with unreadable lead text.
		testutil.Calls("Building the hero.",
			testutil.WriteFile(abs("index.html"), page),
			testutil.WriteFile(abs("src/main.ts"), main),
			testutil.WriteFile(abs("src/app.css"), grey),
			testutil.Shell("sh", "-c", done),
		),
		testutil.Text("The hero is built."),
		// Iteration 3: read the gate's findings, fix the colour.
		testutil.Calls("Reading the feedback and the stylesheet.", testutil.Shell("cat", ".ralph/feedback.md"),
			testutil.RawCall("Read", map[string]any{"file_path": abs("src/app.css")})),
		testutil.Calls("The lead text is too light; using the theme's muted foreground.",
			testutil.WriteFile(abs("src/app.css"), dark),
			testutil.Shell("sh", "-c", done),
		),
		testutil.Text("Fixed the contrast."),
	)
	writeConfig(t, dir, claudeConfig(t, srv, ""))
	bin := buildRalph(t)

	res := runRalph(t, bin, dir, 4*time.Minute, "run", "build the Tideline landing page")
	rec := readRun(t, dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\nevents:\n%s", res.code, res.out, rec.dump())
	}
	for _, want := range []string{"phase is now BUILD", "ui-renders fail", "ui-renders pass", "completed"} {
		if !strings.Contains(res.out, want) {
			t.Errorf("output lacks %q:\n%s", want, res.out)
		}
	}
	if got := rec.outcomes(); !strings.HasSuffix(got, ",3:completed") {
		t.Errorf("iteration outcomes = %s, want the third to complete\nevents:\n%s", got, rec.dump())
	}
	// What the model read back from feedback.md: the finding, exactly.
	var saw string
	for _, r := range srv.Scripted() {
		if strings.Contains(r.UserText, "## FAIL [ui-renders]") {
			saw = r.UserText
		}
	}
	for _, want := range []string{
		`text fails WCAG AA contrast: [data-section="hero"] p.lead "Tide tables for every harbour" is #cccccc on #ffffff, 1.60:1 (normal text needs 4.5:1)`,
		"fix: Use colours with at least 4.5:1 contrast",
		".ralph/preview/home-desktop.png, .ralph/preview/home-phone.png",
	} {
		if !strings.Contains(saw, want) {
			t.Errorf("the model did not read %q in feedback.md; it read:\n%s", want, saw)
		}
	}
	for _, f := range []string{".ralph/preview/home-desktop.png", ".ralph/preview/home-phone.png"} {
		if fi, err := os.Stat(abs(f)); err != nil || fi.Size() < 1000 {
			t.Errorf("screenshot %s: %v", f, err)
		}
	}
}

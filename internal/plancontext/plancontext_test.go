package plancontext

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/theme"
)

// makePlan parses an app plan with the given <Theme> props and one screen
// of sections, each written as its props ("gumdrop=\"hero\" variant=…").
func makePlan(t *testing.T, themeProps string, sections ...string) *plan.Node {
	t.Helper()
	var b strings.Builder
	b.WriteString("<App name=\"Test\" description=\"Test app\">\n")
	fmt.Fprintf(&b, "  <Theme %s />\n", themeProps)
	b.WriteString("  <Screen name=\"main\" layout=\"scroll\">\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "    <Section %s />\n", s)
	}
	b.WriteString("  </Screen>\n</App>\n")
	root, err := plan.Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("parse test plan: %v\n%s", err, b.String())
	}
	return root
}

func embedded(t *testing.T) *recipe.Library {
	t.Helper()
	lib, err := recipe.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func resolve(t *testing.T, dir string, root *plan.Node) Context {
	t.Helper()
	return Resolve(context.Background(), root, Options{Dir: dir, Recipes: embedded(t)})
}

// stylesheetOK checks that the stylesheet in dir holds a complete theme.
func stylesheetOK(t *testing.T, dir, rel string) string {
	t.Helper()
	css, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatalf("theme not written: %v", err)
	}
	if missing := theme.CheckCSS(css); len(missing) > 0 {
		t.Fatalf("stylesheet lacks %d tokens, first %s", len(missing), missing[0])
	}
	return string(css)
}

func TestResolvePresetThemeFromMood(t *testing.T) {
	dir := t.TempDir()
	c := resolve(t, dir, makePlan(t, `mood="cyberpunk"`, `gumdrop="hero"`))
	if !c.Theme.Applied || c.Theme.Mode != ModePreset || c.Theme.Error != "" {
		t.Fatalf("theme = %+v", c.Theme)
	}
	if c.Theme.Command != "ralph theme preset cyberpunk --apply" {
		t.Errorf("command = %q", c.Theme.Command)
	}
	if !strings.Contains(c.Theme.Output, `Applied preset "cyberpunk"`) || !strings.Contains(c.Theme.Output, "src/index.css") {
		t.Errorf("output = %q", c.Theme.Output)
	}
	css := stylesheetOK(t, dir, "src/index.css")
	if !strings.Contains(css, theme.StartMarker) {
		t.Error("no theme markers in the stylesheet")
	}
	// `ralph theme modify` starts from the record the harness leaves.
	rec, err := theme.LoadRecord(filepath.Join(dir, theme.RecordFile))
	if err != nil || rec.Request.Preset != "cyberpunk" {
		t.Errorf("record = %+v, %v", rec, err)
	}
}

func TestResolvePresetIgnoresGenerateProps(t *testing.T) {
	c := resolve(t, t.TempDir(), makePlan(t, `mood="tangerine" font="Inter" radius="pill"`))
	if !c.Theme.Applied || c.Theme.Command != "ralph theme preset tangerine --apply" {
		t.Fatalf("theme = %+v", c.Theme)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "font, radius are ignored") {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

func TestResolveChromaWord(t *testing.T) {
	c := resolve(t, t.TempDir(), makePlan(t, `seed={20} pattern="analogous" chroma="vivid"`))
	if !c.Theme.Applied || strings.Contains(c.Theme.Command, "--chroma") {
		t.Fatalf("theme = %+v", c.Theme)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `chroma "vivid" is not a number`) {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

func TestResolvedThemePassesTheGate(t *testing.T) {
	dir := t.TempDir()
	g := &gate.CSSThemeComplete{}
	c := resolve(t, dir, makePlan(t, `seed={75} pattern="seedOfLife" mood="zen"`, `gumdrop="hero"`))
	if !c.Theme.Applied {
		t.Fatalf("theme = %+v", c.Theme)
	}
	if r := g.Check(context.Background(), gate.Env{Root: dir}); r.Status != gate.Pass {
		t.Errorf("css-theme-complete after Resolve: %s %q", r.Status, r.Message)
	}
}

func TestResolvePresetNameForms(t *testing.T) {
	// Validation folds case, '-', '_' and spaces; so must resolution.
	dir := t.TempDir()
	c := resolve(t, dir, makePlan(t, `mood="Northern Lights"`, `gumdrop="hero"`))
	if !c.Theme.Applied || c.Theme.Command != "ralph theme preset northern-lights --apply" {
		t.Fatalf("theme = %+v", c.Theme)
	}
}

func TestResolveGenerateThemeFromSeedAndPattern(t *testing.T) {
	dir := t.TempDir()
	root := makePlan(t, `seed={180} pattern="triadic" mood="playful" font="Orbitron" shadowProfile="dramatic" radius="rounded" chroma={0.2}`)
	c := Resolve(context.Background(), root, Options{Dir: dir, Stylesheet: "app/styles.css", Recipes: embedded(t)})
	if !c.Theme.Applied || c.Theme.Mode != ModeGenerate {
		t.Fatalf("theme = %+v", c.Theme)
	}
	for _, want := range []string{
		"ralph theme generate --seed 180 --pattern triadic",
		"--mood playful", "--chroma 0.2", "--font Orbitron",
		"--shadow-profile dramatic", "--radius rounded", "--apply",
	} {
		if !strings.Contains(c.Theme.Command, want) {
			t.Errorf("command %q lacks %q", c.Theme.Command, want)
		}
	}
	if c.Theme.Stylesheet != "app/styles.css" || !strings.Contains(c.Theme.Output, "app/styles.css") {
		t.Errorf("stylesheet %q, output %q", c.Theme.Stylesheet, c.Theme.Output)
	}
	css := stylesheetOK(t, dir, "app/styles.css")
	if !strings.Contains(css, "Orbitron") {
		t.Error("the font did not reach the stylesheet")
	}
	if _, err := os.Stat(filepath.Join(dir, "src/index.css")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the default stylesheet was written although another was configured")
	}
}

func TestResolveGenerateWithFontNeedingQuotes(t *testing.T) {
	dir := t.TempDir()
	c := resolve(t, dir, makePlan(t, `seed={20} pattern="analogous" font="Space Grotesk" chroma="0.1"`))
	if !c.Theme.Applied {
		t.Fatalf("theme = %+v", c.Theme)
	}
	if !strings.Contains(c.Theme.Command, "--font 'Space Grotesk'") || !strings.Contains(c.Theme.Command, "--chroma 0.1") {
		t.Errorf("command = %q", c.Theme.Command)
	}
}

func TestResolveGenerateWithPresetAsMood(t *testing.T) {
	dir := t.TempDir()
	c := resolve(t, dir, makePlan(t, `seed={300} pattern="complementary" mood="cyberpunk"`))
	if !c.Theme.Applied || c.Theme.Mode != ModeGenerate {
		t.Fatalf("theme = %+v", c.Theme)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `"cyberpunk" is a preset`) {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

// TestResolveEveryValidTheme is the resolution table: every combination
// of <Theme> props that validation accepts is applied, as a preset or a
// generated theme, with what the plan left out filled in and said.
func TestResolveEveryValidTheme(t *testing.T) {
	type tc struct {
		props    string
		mode     ThemeMode
		argv     string   // the command, without "ralph " and " --apply"; "" skips
		defaults []string // each a prefix of one default, in order
		warning  string   // a substring of the one warning; "" wants none
	}
	tests := []tc{
		{`mood="cyberpunk"`, ModePreset, "theme preset cyberpunk", nil, ""},
		{`mood="Soft Pop"`, ModePreset, "theme preset soft-pop", nil, ""},
		{`mood="tangerine" seed={10}`, ModePreset, "theme preset tangerine", nil, "seed is ignored"},
		{`mood="tangerine" pattern="triadic" radius="pill"`, ModePreset, "theme preset tangerine", nil, "pattern, radius are ignored"},
		{`seed={180} pattern="triadic"`, ModeGenerate, "theme generate --seed 180 --pattern triadic", nil, ""},
		{`seed={-30} pattern="analogous" mood="zen"`, ModeGenerate, "theme generate --seed 330 --pattern analogous --mood zen", nil, ""},
		{`seed={1e300} pattern="triadic"`, ModeGenerate, "", nil, ""},
		{`seed={300} pattern="complementary" mood="cyberpunk"`, ModeGenerate, "theme generate --seed 300 --pattern complementary --mood industrial", nil, `"cyberpunk" is a preset`},
		{`mood="organic" seed={200}`, ModeGenerate, "theme generate --seed 200 --pattern analogous --mood organic", []string{"pattern analogous (the organic mood's default)"}, ""},
		{`mood="zen" pattern="tetradic"`, ModeGenerate, "", []string{"seed "}, ""},
		{`seed={12}`, ModeGenerate, "theme generate --seed 12 --pattern complementary --mood minimal", []string{"mood minimal (the default)", "pattern complementary"}, ""},
		{`pattern="triadic"`, ModeGenerate, "", []string{"mood minimal", "seed "}, ""},
		{``, ModeGenerate, "", []string{"mood minimal", "seed ", "pattern complementary"}, ""},
		{`philosophy="calm and quiet"`, ModeGenerate, "", []string{"mood minimal", "seed ", "pattern complementary"}, ""},
		{`font="Space Grotesk" radius="pill" shadowProfile="harsh"`, ModeGenerate, "", []string{"mood minimal", "seed ", "pattern "}, ""},
		{`mood="retro" monoFont="Fira Code"`, ModeGenerate, "", []string{"seed ", "pattern triadic"}, `monoFont "Fira Code" is not applied`},
		{`mood="playful" chroma={2}`, ModeGenerate, "", []string{"seed ", "pattern "}, "chroma 2 is outside 0 to 0.4; 0.4 was used"},
		{`mood="playful" chroma={-1}`, ModeGenerate, "", []string{"seed ", "pattern "}, "chroma -1 is outside 0 to 0.4; 0 was used"},
		{`mood="playful" chroma="NaN"`, ModeGenerate, "", []string{"seed ", "pattern "}, `chroma "NaN" is not a number`},
		{`mood="playful" chroma="0.05"`, ModeGenerate, "", []string{"seed ", "pattern "}, ""},
	}
	for _, m := range theme.Moods() {
		tests = append(tests, tc{fmt.Sprintf("mood=%q", m.Name), ModeGenerate, "",
			[]string{"seed ", fmt.Sprintf("pattern %s (the %s mood's default)", m.Pattern, m.Name)}, ""})
	}
	reg := Registries(embedded(t))
	for _, tt := range tests {
		t.Run(tt.props, func(t *testing.T) {
			root := makePlan(t, tt.props, `gumdrop="hero"`)
			if res := plan.Validate(root, reg); !res.OK() {
				t.Fatalf("the plan does not validate: %+v", res.Failures)
			}
			dir := t.TempDir()
			var logs strings.Builder
			c := Resolve(context.Background(), root, Options{Dir: dir, Recipes: embedded(t),
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			th := c.Theme
			if !th.Applied || th.Error != "" || th.Mode != tt.mode {
				t.Fatalf("theme = %+v", th)
			}
			if strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("warned for a valid theme:\n%s", logs.String())
			}
			if tt.argv != "" && th.Command != "ralph "+tt.argv+" --apply" {
				t.Errorf("command = %q, want %q", th.Command, "ralph "+tt.argv+" --apply")
			}
			if th.Command != "ralph "+theme.CommandLine(th.Argv) {
				t.Errorf("command %q and argv %q differ", th.Command, th.Argv)
			}
			if len(th.Defaults) != len(tt.defaults) {
				t.Fatalf("defaults = %q, want %q", th.Defaults, tt.defaults)
			}
			for i, d := range tt.defaults {
				if !strings.HasPrefix(th.Defaults[i], d) {
					t.Errorf("default %d = %q, want prefix %q", i, th.Defaults[i], d)
				}
			}
			switch {
			case tt.warning == "" && len(c.Warnings) != 0:
				t.Errorf("warnings = %q", c.Warnings)
			case tt.warning != "" && (len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], tt.warning)):
				t.Errorf("warnings = %q, want one with %q", c.Warnings, tt.warning)
			}
			stylesheetOK(t, dir, "src/index.css")
			// What was recorded rebuilds with every text pair at AA.
			rec, err := theme.LoadRecord(filepath.Join(dir, theme.RecordFile))
			if err != nil {
				t.Fatal(err)
			}
			built, err := theme.Build(rec.Request)
			if err != nil {
				t.Fatal(err)
			}
			if f := built.ContrastFailures(); len(f) != 0 {
				t.Errorf("contrast failures: %v", f)
			}
			if out := Format(c); !strings.Contains(out, "## Theme applied ✓") || !strings.Contains(out, th.Command) {
				t.Errorf("format:\n%s", out)
			}
		})
	}
}

// TestResolveMoodAloneIsDeterministic: the seed a mood alone gets comes
// from the plan, so the same plan gives the same bytes in any directory,
// reformatting the plan keeps them, and other apps get other hues.
func TestResolveMoodAloneIsDeterministic(t *testing.T) {
	apply := func(t *testing.T, src string) (ThemeResult, string) {
		t.Helper()
		root, err := plan.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		c := resolve(t, dir, root)
		if !c.Theme.Applied {
			t.Fatalf("theme = %+v", c.Theme)
		}
		return c.Theme, stylesheetOK(t, dir, "src/index.css")
	}
	for _, m := range theme.Moods() {
		t.Run(m.Name, func(t *testing.T) {
			src := fmt.Sprintf("<App name=\"Tideline\">\n  <Theme mood=%q font=\"Lora\" />\n  <Screen name=\"home\"><Section gumdrop=\"hero\" /></Screen>\n</App>\n", m.Name)
			a, cssA := apply(t, src)
			b, cssB := apply(t, src)
			if cssA != cssB || a.Command != b.Command {
				t.Fatalf("the same plan gave two themes: %q and %q", a.Command, b.Command)
			}
			// The same <Theme> moved, its props reordered and spaced out.
			moved := fmt.Sprintf("<App name=\"Tideline\">\n\n  <Screen name=\"home\">\n    <Section gumdrop=\"hero\" />\n  </Screen>\n  <Theme   font=\"Lora\"\n    mood=%q />\n</App>\n", m.Name)
			if c, css := apply(t, moved); css != cssA || c.Command != a.Command {
				t.Errorf("reformatting the plan changed the theme: %q, was %q", c.Command, a.Command)
			}
			seed := a.Argv[3]
			if a.Argv[1] != "generate" || a.Argv[2] != "--seed" {
				t.Fatalf("argv = %q", a.Argv)
			}
			hue, err := strconv.ParseFloat(seed, 64)
			if err != nil || theme.NormalizeHue(hue-m.Hues.From) >= m.Hues.Span {
				t.Errorf("seed %s is not on the %s arc %+v", seed, m.Name, m.Hues)
			}
			seeds := map[string]bool{}
			for i := range 12 {
				c, _ := apply(t, strings.Replace(src, "Tideline", fmt.Sprintf("App %d", i), 1))
				seeds[c.Argv[3]] = true
			}
			if len(seeds) < 4 {
				t.Errorf("12 app names gave only seeds %v", seeds)
			}
		})
	}
}

func TestResolveThemeFailureIsReported(t *testing.T) {
	t.Run("unknown pattern", func(t *testing.T) {
		dir := t.TempDir()
		c := resolve(t, dir, makePlan(t, `seed={10} pattern="zigzag"`, `gumdrop="hero"`))
		if c.Theme.Applied || c.Theme.Mode != ModeGenerate {
			t.Fatalf("theme = %+v", c.Theme)
		}
		if !strings.Contains(c.Theme.Error, `unknown pattern "zigzag"`) || !strings.Contains(c.Theme.Error, "triadic") {
			t.Errorf("error = %q", c.Theme.Error)
		}
		if !strings.Contains(c.Theme.Command, "--pattern zigzag") {
			t.Errorf("command = %q", c.Theme.Command)
		}
	})
	t.Run("unknown mood", func(t *testing.T) {
		// Validation rejects it; resolution names the moods there are.
		c := resolve(t, t.TempDir(), makePlan(t, `mood="sunset"`, `gumdrop="hero"`))
		if c.Theme.Applied || !strings.Contains(c.Theme.Error, `unknown mood "sunset"`) || !strings.Contains(c.Theme.Error, "organic") {
			t.Fatalf("theme = %+v", c.Theme)
		}
		if !strings.Contains(c.Theme.Command, "--mood sunset") {
			t.Errorf("command = %q", c.Theme.Command)
		}
	})
	t.Run("stylesheet cannot be written", func(t *testing.T) {
		dir := t.TempDir()
		// src is a file, so src/index.css cannot be created, even by root.
		if err := os.WriteFile(filepath.Join(dir, "src"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := resolve(t, dir, makePlan(t, `mood="mono"`, `gumdrop="hero"`))
		if c.Theme.Applied || c.Theme.Error == "" || c.Theme.Mode != ModePreset {
			t.Fatalf("theme = %+v", c.Theme)
		}
		if c.Theme.Command != "ralph theme preset mono --apply" {
			t.Errorf("command = %q", c.Theme.Command)
		}
		if len(c.Sections) != 1 || !c.Sections[0].Found {
			t.Errorf("sections = %+v", c.Sections)
		}
		out := Format(c)
		if !strings.Contains(out, "Theme ⚠ not applied") || !strings.Contains(out, "could not apply") {
			t.Errorf("format:\n%s", out)
		}
	})
}

func TestResolveFontWithShellCharactersIsData(t *testing.T) {
	dir := t.TempDir()
	cwd, _ := os.Getwd()
	for _, font := range []string{
		`Inter"; touch PWNED; echo "`,
		`$(touch PWNED)`,
		"`touch PWNED`",
		`Inter' && touch PWNED #`,
	} {
		t.Run(font, func(t *testing.T) {
			// JSX attribute strings have no escapes, so pass the font as
			// a JS string literal.
			root := makePlan(t, fmt.Sprintf("seed={200} pattern=\"triadic\" font={%q}", font), `gumdrop="hero"`)
			if got := plan.Theme(root).Str("font"); got != font {
				t.Fatalf("font parsed as %q", got)
			}
			res := plan.Validate(root, Registries(embedded(t)))
			if res.OK() || !hasFinding(res.Failures, plan.RuleValidFont) {
				t.Errorf("validation accepted font %q: %+v", font, res)
			}
			c := resolve(t, dir, root)
			if c.Theme.Applied || !strings.HasPrefix(c.Theme.Error, "unknown font ") || !strings.Contains(c.Theme.Error, "use one of: Inter") {
				t.Fatalf("theme = %+v", c.Theme)
			}
			// The command shown is quoted for a shell, one argument.
			argv := theme.Request{Generate: theme.GenerateOptions{Seed: 200, Pattern: "triadic", Font: font}}.Argv(true)
			if want := "ralph " + theme.CommandLine(argv); c.Theme.Command != want {
				t.Errorf("command = %q, want %q", c.Theme.Command, want)
			}
			if out := Format(c); !strings.Contains(out, "unknown font") {
				t.Errorf("format:\n%s", out)
			}
		})
	}
	for _, d := range []string{dir, cwd} {
		if _, err := os.Stat(filepath.Join(d, "PWNED")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("something was executed: %s/PWNED exists", d)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "src")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a stylesheet was written for a rejected font")
	}
}

func hasFinding(fs []plan.Finding, id string) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
}

func TestResolveSectionsByExactID(t *testing.T) {
	c := resolve(t, t.TempDir(), makePlan(t, `mood="cyberpunk"`,
		`gumdrop="hero" variant="split-image"`,
		`gumdrop="pricing"`,
		`gumdrop="multi-step-wizard" file="./src/components/Wizard.tsx"`,
	))
	if len(c.Sections) != 3 {
		t.Fatalf("sections = %+v", c.Sections)
	}
	hero := c.Sections[0]
	if hero.Gumdrop != "hero" || hero.Variant != "split-image" || !hero.Found {
		t.Errorf("hero = %+v", hero)
	}
	if hero.File != "src/sections/HeroSection.tsx" {
		t.Errorf("hero file = %q", hero.File)
	}
	if !strings.Contains(hero.Recipe, "## Layout") || strings.HasPrefix(hero.Recipe, "---") || strings.Contains(hero.Recipe, "components:") {
		t.Errorf("hero recipe is not the body:\n%.200s", hero.Recipe)
	}
	if !contains(hero.Components, "Button") {
		t.Errorf("hero components = %q", hero.Components)
	}
	if p := c.Sections[1]; p.Gumdrop != "pricing" || p.File != "src/sections/PricingSection.tsx" || !p.Found || len(p.Components) == 0 {
		t.Errorf("pricing = %+v", p)
	}
	if w := c.Sections[2]; w.File != "src/components/Wizard.tsx" || !w.Found {
		t.Errorf("wizard = %+v", w)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

func TestResolveUnknownRecipe(t *testing.T) {
	c := resolve(t, t.TempDir(), makePlan(t, `mood="cyberpunk"`, `gumdrop="nonexistent-thing"`, `gumdrop="heros"`))
	for i, s := range c.Sections {
		if s.Found || s.Recipe != "" || len(s.Components) != 0 {
			t.Errorf("section %d = %+v", i, s)
		}
	}
	if c.Sections[0].File != "src/sections/NonexistentThingSection.tsx" {
		t.Errorf("file = %q", c.Sections[0].File)
	}
	out := Format(c)
	for _, want := range []string{`No recipe found for "nonexistent-thing"`, `No recipe found for "heros"`} {
		if !strings.Contains(out, want) {
			t.Errorf("format lacks %q:\n%s", want, out)
		}
	}
}

func TestResolveUnknownVariantWarns(t *testing.T) {
	c := resolve(t, t.TempDir(), makePlan(t, `mood="mono"`, `gumdrop="hero" variant="diagonal"`))
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `variant "diagonal"`) || !strings.Contains(c.Warnings[0], "split-image") {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

func TestResolveProjectRecipesWhenNoLibraryGiven(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, recipe.ProjectDir), 0o755)
	os.WriteFile(filepath.Join(dir, recipe.ProjectDir, "hero.md"), []byte("---\nname: Our hero\ncomponents: [Card]\n---\nOUR OWN HERO\n"), 0o644)
	c := Resolve(context.Background(), makePlan(t, `mood="mono"`, `gumdrop="hero"`, `gumdrop="faq"`), Options{Dir: dir})
	if s := c.Sections[0]; s.Recipe != "OUR OWN HERO" || len(s.Components) != 1 || s.Components[0] != "Card" {
		t.Errorf("hero = %+v", s)
	}
	if !c.Sections[1].Found {
		t.Error("embedded faq not found")
	}
}

func TestResolveOrchestrationPlan(t *testing.T) {
	root, err := plan.Parse([]byte(`<Plan name="p">
  <Phase name="one">
    <Step name="research">Read the code.
More.</Step>
    <Human message="Approve?" />
  </Phase>
  <Stop reason="done" />
</Plan>`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := Resolve(context.Background(), root, Options{Dir: dir})
	if c.Theme.Mode != ModeNone || c.Theme.Error != "" || c.Theme.Applied {
		t.Errorf("theme = %+v", c.Theme)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %v", entries)
	}
	out := Format(c)
	for _, want := range []string{"## Steps, in order", "1. [one] research: Read the code.", "2. [one] human approval: Approve?", "3. stop: done"} {
		if !strings.Contains(out, want) {
			t.Errorf("format lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Theme") {
		t.Errorf("theme talk in an orchestration plan:\n%s", out)
	}
}

func TestResolveWithoutDirAppliesNothing(t *testing.T) {
	c := Resolve(context.Background(), makePlan(t, `mood="mono"`, `gumdrop="hero"`), Options{Recipes: embedded(t)})
	if c.Theme.Applied || c.Theme.Error != "no workspace directory to apply the theme in" || c.Theme.Command == "" {
		t.Errorf("theme = %+v", c.Theme)
	}
	if len(c.Sections) != 1 || !c.Sections[0].Found {
		t.Errorf("sections = %+v", c.Sections)
	}
}

func TestResolveNilPlan(t *testing.T) {
	c := Resolve(context.Background(), nil, Options{Dir: t.TempDir()})
	if c.Theme.Mode != ModeNone || len(c.Sections) != 0 {
		t.Errorf("c = %+v", c)
	}
}

func TestRegistriesAcceptWhatResolutionAccepts(t *testing.T) {
	lib := embedded(t)
	reg := Registries(lib)
	check := func(t *testing.T, themeProps string, sections ...string) {
		t.Helper()
		if len(sections) == 0 {
			sections = []string{`gumdrop="hero"`, `gumdrop="faq"`, `gumdrop="cta"`}
		}
		root := makePlan(t, themeProps, sections...)
		if res := plan.Validate(root, reg); !res.OK() {
			t.Errorf("<Theme %s> with %v: %+v", themeProps, sections, res.Failures)
		}
	}
	want := func(name string, got, list []string) {
		if len(got) != len(list) || len(got) == 0 {
			t.Errorf("%s: %d names, want %d", name, len(got), len(list))
		}
	}
	want("moods", reg.Moods, names(theme.Moods(), func(m theme.Mood) string { return m.Name }))
	want("presets", reg.Presets, names(theme.Presets(), func(p theme.PresetInfo) string { return p.Name }))
	want("fonts", reg.Fonts, names(theme.CuratedFonts(), func(f theme.Font) string { return f.Name }))
	want("recipes", reg.Recipes, lib.IDs())

	dir := t.TempDir()
	for _, p := range theme.Presets() {
		check(t, fmt.Sprintf("mood=%q", p.Name))
		if c := resolve(t, dir, makePlan(t, fmt.Sprintf("mood=%q", p.Name))); !c.Theme.Applied {
			t.Errorf("preset %s validates but does not apply: %s", p.Name, c.Theme.Error)
		}
	}
	for _, m := range theme.Moods() {
		check(t, fmt.Sprintf("seed={90} pattern=\"triadic\" mood=%q", m.Name))
	}
	for _, p := range theme.Patterns() {
		check(t, fmt.Sprintf("seed={90} pattern=%q", p.Name))
	}
	for _, f := range theme.CuratedFonts() {
		props := fmt.Sprintf("seed={90} pattern=\"triadic\" font=%q monoFont=%q", f.Name, f.Name)
		check(t, props)
		if c := resolve(t, dir, makePlan(t, props)); !c.Theme.Applied {
			t.Errorf("font %s validates but does not apply: %s", f.Name, c.Theme.Error)
		}
	}
	for _, s := range theme.ShadowProfiles() {
		check(t, fmt.Sprintf("seed={90} pattern=\"triadic\" shadowProfile=%q", s.Name))
	}
	for _, r := range theme.RadiusStops() {
		check(t, fmt.Sprintf("seed={90} pattern=\"triadic\" radius=%q", r.Name))
	}
	// Every recipe id, three to a plan (low-diversity is only a warning).
	ids := lib.IDs()
	for i := 0; i < len(ids); i += 3 {
		var secs []string
		for _, id := range ids[i:min(i+3, len(ids))] {
			secs = append(secs, fmt.Sprintf("gumdrop=%q", id))
			if plan.DefaultSectionFile(id) != recipe.SuggestedFile(id) {
				t.Errorf("%s: plan suggests %s, recipe %s", id, plan.DefaultSectionFile(id), recipe.SuggestedFile(id))
			}
		}
		check(t, `mood="mono"`, secs...)
	}
	// And it rejects what the engine would reject.
	root := makePlan(t, `mood="sunset" font="Comic Sans"`, `gumdrop="heroic"`)
	res := plan.Validate(root, reg)
	for _, id := range []string{plan.RuleValidMood, plan.RuleValidFont, plan.RuleValidGumdrops} {
		if !hasFinding(res.Failures, id) {
			t.Errorf("no %s failure: %+v", id, res.Failures)
		}
	}
}

func TestRegistriesWithProjectRecipes(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, recipe.ProjectDir), 0o755)
	os.WriteFile(filepath.Join(dir, recipe.ProjectDir, "our-banner.md"), []byte("---\nname: Banner\n---\nBody\n"), 0o644)
	lib, err := recipe.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	root := makePlan(t, `mood="mono"`, `gumdrop="our-banner"`, `gumdrop="hero"`, `gumdrop="faq"`)
	if res := plan.Validate(root, Registries(lib)); !res.OK() {
		t.Errorf("project recipe rejected: %+v", res.Failures)
	}
	if res := plan.Validate(root, Registries(nil)); res.OK() {
		t.Error("nil library accepted a project-only recipe")
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// TestResolveIsTotalOverValidThemes tries every subset of the <Theme>
// props with each kind of mood (none, a mood, a preset): whatever
// validation accepts, Resolve applies.
func TestResolveIsTotalOverValidThemes(t *testing.T) {
	optional := []string{`seed={-725.25}`, `pattern="vesica-piscis"`, `chroma="0.9"`, `font="Fira Code"`,
		`shadowProfile="none"`, `radius="Pill"`}
	lib := embedded(t)
	reg := Registries(lib)
	dir := t.TempDir()
	n := 0
	for _, mood := range []string{``, `mood="Fashion Editorial"`, `mood="doom_64"`} {
		for mask := range 1 << len(optional) {
			props := []string{mood}
			for i, p := range optional {
				if mask&(1<<i) != 0 {
					props = append(props, p)
				}
			}
			src := strings.Join(props, " ")
			root := makePlan(t, src, `gumdrop="hero"`)
			if res := plan.Validate(root, reg); !res.OK() {
				t.Fatalf("<Theme %s> does not validate: %+v", src, res.Failures)
			}
			c := Resolve(context.Background(), root, Options{Dir: dir, Recipes: lib})
			if !c.Theme.Applied {
				t.Fatalf("<Theme %s> validates but is not applied: %+v", src, c.Theme)
			}
			n++
		}
	}
	t.Logf("%d valid <Theme>s applied", n)
}

// FuzzResolveValidTheme: any numbers in seed and chroma, with or without
// a pattern and a mood, resolve to an applied theme when the plan
// validates.
func FuzzResolveValidTheme(f *testing.F) {
	f.Add(152.0, 0.2, "organic", "triadic", true)
	f.Add(-1e300, 7.0, "cyberpunk", "", false)
	f.Add(0.0, -0.1, "", "fibonacci", true)
	f.Add(359.99, 0.4, "luxury", "seedOfLife", false)
	lib, err := recipe.Embedded()
	if err != nil {
		f.Fatal(err)
	}
	reg := Registries(lib)
	f.Fuzz(func(t *testing.T, seed, chroma float64, mood, pattern string, withSeed bool) {
		if math.IsNaN(seed) || math.IsInf(seed, 0) || math.IsNaN(chroma) || math.IsInf(chroma, 0) {
			t.Skip("a plan has no literal for NaN or infinity")
		}
		props := []string{fmt.Sprintf("chroma={%s}", strconv.FormatFloat(chroma, 'g', -1, 64))}
		if withSeed {
			props = append(props, fmt.Sprintf("seed={%s}", strconv.FormatFloat(seed, 'g', -1, 64)))
		}
		if mood != "" {
			props = append(props, fmt.Sprintf("mood={%q}", mood))
		}
		if pattern != "" {
			props = append(props, fmt.Sprintf("pattern={%q}", pattern))
		}
		src := fmt.Sprintf("<App name=\"F\">\n  <Theme %s />\n  <Screen name=\"s\"><Section gumdrop=\"hero\" /></Screen>\n</App>\n", strings.Join(props, " "))
		root, err := plan.Parse([]byte(src))
		if err != nil || !plan.Validate(root, reg).OK() {
			return
		}
		c := Resolve(context.Background(), root, Options{Dir: t.TempDir(), Recipes: lib})
		if !c.Theme.Applied {
			t.Fatalf("%s\nvalidates but is not applied: %+v", src, c.Theme)
		}
	})
}

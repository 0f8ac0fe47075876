package plancontext

import (
	"strings"
	"testing"
)

func TestFormatThemeApplied(t *testing.T) {
	out := Format(Context{Theme: ThemeResult{
		Mode: ModePreset, Applied: true, Stylesheet: "src/index.css",
		Command: "ralph theme preset cyberpunk --apply",
		Output:  "Applied preset \"cyberpunk\" (66 vars) to src/index.css\n",
	}})
	for _, want := range []string{
		"## Theme applied ✓",
		"    ralph theme preset cyberpunk --apply",
		"    Applied preset \"cyberpunk\" (66 vars) to src/index.css",
		"Do not run `ralph theme preset` or `ralph theme generate` again",
		"`ralph theme modify --shift-hue DEG --apply`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	// The engine writes the heading and the closing instructions.
	for _, not := range []string{"Plan Validated", "summary.md", "status.txt", "Plan warnings"} {
		if strings.Contains(out, not) {
			t.Errorf("repeats %q:\n%s", not, out)
		}
	}
}

func TestFormatThemeDefaults(t *testing.T) {
	out := Format(Context{Theme: ThemeResult{
		Mode: ModeGenerate, Applied: true, Stylesheet: "src/index.css",
		Command:  "ralph theme generate --seed 87 --pattern analogous --mood organic --apply",
		Defaults: []string{"seed 87° (derived from the plan, so the same plan always gets this theme)", "pattern analogous (the organic mood's default)"},
		Output:   "Applied generated theme (88 vars) to src/index.css\n",
	}})
	for _, want := range []string{
		"    ralph theme generate --seed 87 --pattern analogous --mood organic --apply",
		"the harness chose them: seed 87° (derived from the plan, so the same plan always gets this theme), pattern analogous (the organic mood's default).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	plain := Format(Context{Theme: ThemeResult{Mode: ModePreset, Applied: true, Stylesheet: "src/index.css", Command: "ralph theme preset mono --apply"}})
	if strings.Contains(plain, "chose") {
		t.Errorf("defaults mentioned for a plan that gave them all:\n%s", plain)
	}
}

func TestFormatThemeError(t *testing.T) {
	out := Format(Context{Theme: ThemeResult{Mode: ModeNone, Stylesheet: "src/index.css",
		Error: "the plan has no <Theme>"}})
	for _, want := range []string{"## Theme ⚠ not applied", "could not apply", "the plan has no <Theme>", "`ralph theme preset NAME --apply`", "`src/index.css`"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "It tried") {
		t.Errorf("no command was built, yet one is shown:\n%s", out)
	}
}

func TestFormatSectionsInOrder(t *testing.T) {
	out := Format(Context{
		Theme: ThemeResult{Mode: ModePreset, Applied: true, Command: "ralph theme preset mono --apply", Output: "Applied", Stylesheet: "src/index.css"},
		Sections: []SectionContext{
			{Gumdrop: "hero", Variant: "centered", Found: true, File: "src/sections/HeroSection.tsx",
				Components: []string{"Button", "Badge"},
				Recipe:     "# Hero\n\nRecipe content here.\n\n## Layout\n\n```tsx\n# not a heading\n```\n\n  ## indented stays"},
			{Gumdrop: "pricing", File: "src/sections/PricingSection.tsx"},
			{Gumdrop: "faq", Found: true, File: "src/sections/FaqSection.tsx", Recipe: "FAQ body"},
		},
		Warnings: []string{"Theme monoFont \"x\" is not applied by the theme engine."},
	})
	want := []string{
		"ralph theme preset mono --apply",
		"## Sections, in order",
		"Put `data-section=\"<recipe id>\"` on each section's root element",
		"the ui-renders gate loads every screen in a browser at 1280×800 and 390×844",
		"### 1. hero (variant: centered) → `src/sections/HeroSection.tsx`",
		"**Root element:** `data-section=\"hero\"`",
		"**Components:** Button, Badge",
		"### Hero", // the recipe's # Hero, demoted
		"Recipe content here.",
		"#### Layout",
		"# not a heading",
		"  ## indented stays",
		"### 2. pricing → `src/sections/PricingSection.tsx`",
		"**Root element:** `data-section=\"pricing\"`",
		`No recipe found for "pricing"`,
		"### 3. faq → `src/sections/FaqSection.tsx`",
		"FAQ body",
		"## Notes from the harness",
		"- Theme monoFont",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if i < 0 {
			t.Fatalf("lacks %q after offset %d:\n%s", w, at, out)
		}
		at += i + len(w)
	}
	if strings.Contains(out, "\n## Layout") {
		t.Errorf("recipe heading not demoted:\n%s", out)
	}
}

func TestFormatEmpty(t *testing.T) {
	if out := Format(Context{Theme: ThemeResult{Mode: ModeNone}}); strings.TrimSpace(out) != "" {
		t.Errorf("empty context formats as %q", out)
	}
}

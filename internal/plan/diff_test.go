package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPascalCase(t *testing.T) {
	for in, want := range map[string]string{
		"hero":              "Hero",
		"multi-step-wizard": "MultiStepWizard",
		"ai-prompt":         "AiPrompt",
		"stats_dashboard":   "StatsDashboard",
	} {
		if got := PascalCase(in); got != want {
			t.Errorf("PascalCase(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DefaultSectionFile("multi-step-wizard"); got != "src/sections/MultiStepWizardSection.tsx" {
		t.Errorf("DefaultSectionFile = %q", got)
	}
}

func TestDiff(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("export {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("src/sections/HeroSection.tsx")
	write("src/sections/custom/Pricing.tsx")
	write("src/sections/OldSection.tsx")
	write("src/sections/HeroSection.test.tsx")
	write("src/sections/index.ts")
	write("src/sections/README.md")
	root := mustParse(t, `<App name="a"><Screen name="s">
  <Section gumdrop="hero" />
  <Section gumdrop="pricing" file="./src/sections/custom/Pricing.tsx" />
  <Section gumdrop="multi-step-wizard" />
</Screen></App>`)
	res, err := Diff(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) != 1 || res.Missing[0].File != "src/sections/MultiStepWizardSection.tsx" || res.Missing[0].Section.Line != 4 {
		t.Errorf("Missing = %+v", res.Missing)
	}
	if !cmp.Equal(res.Unplanned, []string{"src/sections/OldSection.tsx"}) {
		t.Errorf("Unplanned = %v", res.Unplanned)
	}

	// No src/sections at all: every section is missing, nothing unplanned.
	res, err = Diff(root, t.TempDir())
	if err != nil || len(res.Missing) != 3 || len(res.Unplanned) != 0 {
		t.Errorf("empty dir: %+v, %v", res, err)
	}
}

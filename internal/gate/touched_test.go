package gate

import (
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
)

func TestTouchedFile(t *testing.T) {
	section := func(src string) *plan.Node {
		root, err := plan.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return root
	}
	tests := []struct {
		name    string
		section string
		paths   []string
		want    string
	}{
		{"grid named for the recipe", `<Section gumdrop="features" />`, []string{"src/App.tsx", "src/components/FeatureGrid.tsx"}, "src/components/FeatureGrid.tsx"},
		{"most recent match wins", `<Section gumdrop="features" />`, []string{"src/a/FeaturesSection.tsx", "src/b/features-list.jsx"}, "src/b/features-list.jsx"},
		{"by the section's name", `<Section gumdrop="grid-list" name="Flavors" />`, []string{"src/components/FlavorCards.tsx"}, "src/components/FlavorCards.tsx"},
		{"multi-word recipe id", `<Section gumdrop="multi-step-wizard" />`, []string{"src/MultiStepWizard.tsx"}, "src/MultiStepWizard.tsx"},
		{"not a source file", `<Section gumdrop="features" />`, []string{"docs/features.md", "src/features.css"}, ""},
		{"ralph's own files are not sources", `<Section gumdrop="features" />`, []string{".ralph/features.tsx"}, ""},
		{"nothing matches", `<Section gumdrop="pricing" />`, []string{"src/components/FeatureGrid.tsx"}, ""},
		{"no recipe id or name", `<Section variant="x" />`, []string{"src/components/FeatureGrid.tsx"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TouchedFile(tt.paths, section(tt.section)); got != tt.want {
				t.Errorf("TouchedFile = %q, want %q", got, tt.want)
			}
		})
	}
}

// A file name of one or two letters matches no section, although the
// section's id contains it.
func TestTouchedFileShortNames(t *testing.T) {
	root, err := plan.Parse([]byte(`<Section gumdrop="hero" />`))
	if err != nil {
		t.Fatal(err)
	}
	if got := TouchedFile([]string{"src/er.tsx", "src/H.tsx"}, root); got != "" {
		t.Errorf("TouchedFile = %q, want none", got)
	}
	if got := TouchedFile([]string{"src/HeroSection.tsx", "src/er.tsx"}, root); got != "src/HeroSection.tsx" {
		t.Errorf("TouchedFile = %q, want src/HeroSection.tsx", got)
	}
}

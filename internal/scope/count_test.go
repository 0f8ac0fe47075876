package scope

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountItems counts real-world-shaped section files under
// testdata/count. Each case names the directory that acts as the project
// root (imports resolve inside it) and the section file.
func TestCountItems(t *testing.T) {
	tests := []struct {
		root, file string
		want       int
		how        string // a substring of Count.How
	}{
		{"inline_data", "FlavorGridSection.tsx", 8, "flavors.map over const flavors"},
		{"data_ts", "src/sections/FeaturesSection.tsx", 6, "const features in ./data.ts"},
		{"data_dir", "src/sections/FlavorGrid.tsx", 10, "allFlavors.map over const flavors in ../data/flavors.ts"},
		{"inline_jsx_list", "PricingFeatures.tsx", 5, "consecutive <li> siblings"},
		{"card_siblings", "TeamSection.tsx", 8, "8 consecutive <Card> siblings"},
		{"nested_maps", "MenuSection.tsx", 3, "menu.map"},
		{"typed_array", "PricingSection.tsx", 3, "tiers.map"},
		{"tricky_strings", "QuotesSection.tsx", 4, "quotes.map"},
		{"comments_in_array", "LogosSection.tsx", 5, "logos.map"},
		{"json_import", "TestimonialsSection.tsx", 4, "testimonials.map over ./testimonials.json"},
		{"json_property", "FaqSection.tsx", 3, "content.faq.items.map"},
		{"export_default", "StatsSection.tsx", 4, "stats.map over const stats"},
		{"string_array", "IntegrationsSection.tsx", 6, "integrations.map"},
		{"array_from", "LoadingGrid.tsx", 6, "Array.from({length: 6}).map"},
		{"unmapped_const", "HeroCarousel.tsx", 4, "array literal const slides"},
		{"namespace_import", "TeamSection.tsx", 5, "content.team.map"},
		{"spread_split", "FlavorGridSection.tsx", 10, "allFlavors.map"},
		{"use_state", "TodoSection.tsx", 3, "todos.map"},
		{"object_entries", "PlansSection.tsx", 3, "Object.entries"},
		{".", "filter_passthrough/ProductsSection.tsx", 6, "products.map over const products in ../data/products.ts"},
		{"no_items", "HeroSection.tsx", 0, "no repeated items found"},
		{"reexport", "src/sections/FaqSection.tsx", 5, "faqs.map over const faqs in @/data/faqs.ts"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(filepath.Join(tt.root, tt.file), "/", "_"), func(t *testing.T) {
			root := filepath.Join("testdata", "count", tt.root)
			src, err := os.ReadFile(filepath.Join(root, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := CountItems(src, FSSiblings(os.DirFS(root), tt.file))
			if got.N != tt.want {
				t.Errorf("N = %d, want %d (how: %s)", got.N, tt.want, got.How)
			}
			if !strings.Contains(got.How, tt.how) {
				t.Errorf("How = %q, want it to contain %q", got.How, tt.how)
			}
			if got.Items != nil && len(got.Items) != got.N {
				t.Errorf("len(Items) = %d, N = %d", len(got.Items), got.N)
			}
		})
	}
}

package recipe

import (
	"slices"
	"strings"
	"testing"
)

// specIDs are the recipe ids SPEC.md §6 promises in the embedded library.
var specIDs = []string{
	"activity-feed", "ai-prompt", "api-auth", "api-crud", "api-realtime",
	"api-search", "api-upload", "api-webhook", "article-layout", "auth-login",
	"blog-grid", "calendar-view", "changelog", "chat-messaging", "color-picker",
	"command-palette", "contact", "cta", "data-table", "dialog-modal",
	"documentation", "drag-drop", "empty-state", "faq", "features",
	"file-browser", "file-upload", "footer", "form-layout", "gallery",
	"grid-list", "hero", "kanban-board", "keyboard-shortcuts", "motion-patterns",
	"multi-step-wizard", "newsletter", "notification-feed", "onboarding",
	"portfolio", "pricing", "profile-page", "rich-text-editor",
	"scroll-animation", "search-results", "settings-panel", "sidebar-nav",
	"social-proof", "stats-dashboard", "team", "testimonials", "timeline",
}

func TestEmbeddedLibraryHasExactlyTheSpecIDs(t *testing.T) {
	if len(specIDs) != 52 {
		t.Fatalf("spec list has %d ids, want 52", len(specIDs))
	}
	lib, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range specIDs {
		if _, ok := lib.Get(id); !ok {
			t.Errorf("no embedded recipe %q", id)
		}
	}
	for _, id := range lib.IDs() {
		if !slices.Contains(specIDs, id) {
			t.Errorf("embedded recipe %q is not in the spec's list", id)
		}
	}
	if got := lib.IDs(); !slices.Equal(got, specIDs) {
		t.Errorf("IDs() = %q\nwant    %q", got, specIDs)
	}
}

// requiredSections are the headings every embedded recipe has, in order.
var requiredSections = []string{
	"## Layout",
	"## Components",
	"## Variants",
	"## Responsive behaviour",
	"## Accessibility",
	"## Common mistakes",
}

func TestEmbeddedRecipesWellFormed(t *testing.T) {
	lib, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lib.List() {
		t.Run(r.ID, func(t *testing.T) {
			if r.Source != SourceEmbedded {
				t.Errorf("source = %q", r.Source)
			}
			if r.Name == "" || r.Category == "" {
				t.Errorf("name %q, category %q: both must be set", r.Name, r.Category)
			}
			if len(r.Components) == 0 {
				t.Error("no components")
			}
			if len(r.Variants) < 2 {
				t.Errorf("variants = %q, want at least two", r.Variants)
			}
			for _, v := range r.Variants {
				if !ValidID(v) {
					t.Errorf("variant %q is not lowercase-dashed", v)
				}
				if !strings.Contains(r.Body, "**"+v+"**") {
					t.Errorf("variant %q is not described as **%s** in the body", v, v)
				}
			}
			lines := strings.Split(r.Body, "\n")
			at := 0
			for _, want := range requiredSections {
				found := false
				for ; at < len(lines); at++ {
					if lines[at] == want {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("body lacks %q (or has it out of order)", want)
				}
			}
			data, err := embedded.ReadFile("library/" + r.ID + ".md")
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "\n"); n < 40 || n > 90 {
				t.Errorf("recipe is %d lines, want 40 to 90", n)
			}
		})
	}
}

// TestGridRecipesMapOverData holds the grid-heavy recipes (SPEC.md §5,
// adjacent-grids) to telling the agent to keep items in a data array and
// render them with .map, because the scope gate counts items.
func TestGridRecipesMapOverData(t *testing.T) {
	lib, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"blog-grid", "gallery", "grid-list", "pricing", "features", "team", "testimonials", "portfolio", "stats-dashboard"} {
		r, ok := lib.Get(id)
		if !ok {
			t.Errorf("no recipe %q", id)
			continue
		}
		body := strings.Join(strings.Fields(r.Body), " ")
		if !strings.Contains(body, "data array") || !strings.Contains(body, ".map") {
			t.Errorf("%s does not say to keep items in a data array rendered with .map", id)
		}
	}
}

package recipe

import (
	"strings"
	"testing"
)

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

package recipe

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Recipe
	}{
		{
			name: "scalars and inline lists",
			in:   "---\nname: Hero\ncategory: marketing\ncomponents: [Button, Badge]\nvariants: [centered, split-image]\n---\nbody\n",
			want: Recipe{Name: "Hero", Category: "marketing", Components: []string{"Button", "Badge"}, Variants: []string{"centered", "split-image"}, Body: "body\n"},
		},
		{
			name: "block lists",
			in:   "---\nname: Hero\ncomponents:\n  - Button\n  - Badge\nvariants:\n- centered\n---\nbody",
			want: Recipe{Name: "Hero", Components: []string{"Button", "Badge"}, Variants: []string{"centered"}, Body: "body"},
		},
		{
			name: "comma-separated scalar list",
			in:   "---\nname: Hero\ncomponents: Button, Badge , AspectRatio\n---\n",
			want: Recipe{Name: "Hero", Components: []string{"Button", "Badge", "AspectRatio"}},
		},
		{
			name: "quotes",
			in:   "---\nname: \"Hero: big\"\ncategory: 'it''s'\ncomponents: [\"A, B\", 'C']\n---\n",
			want: Recipe{Name: "Hero: big", Category: "it's", Components: []string{"A, B", "C"}},
		},
		{
			name: "comments, blank lines, unknown keys, CRLF",
			in:   "---\r\n# a comment\r\n\r\nname: Hero\r\ndescription: ignored\r\nvariants: []\r\n---\r\n\r\nbody\r\n",
			want: Recipe{Name: "Hero", Variants: []string{}, Body: "body\n"},
		},
		{
			name: "CR CR LF ends a line too, so the body has no CRLF left",
			in:   "---\nname: Hero\n---\n\r\r\nbody\r\r\nend\r",
			want: Recipe{Name: "Hero", Body: "body\nend"},
		},
		{
			name: "value with a hash is not a comment",
			in:   "---\nname: C# guide\n---\n",
			want: Recipe{Name: "C# guide"},
		},
		{
			name: "value with a colon",
			in:   "---\nname: Ratio 16:9\n---\n",
			want: Recipe{Name: "Ratio 16:9"},
		},
		{
			name: "byte order mark",
			in:   "\ufeff---\nname: Hero\n---\nx",
			want: Recipe{Name: "Hero", Body: "x"},
		},
		{
			name: "continued plain value, trailing comma in an inline list",
			in:   "---\nname: Hero\n  section\nvariants: [a, b,]\n---\n",
			want: Recipe{Name: "Hero section", Variants: []string{"a", "b"}},
		},
		{
			name: "a null value is empty; an alias is followed",
			in:   "---\nname: Hero\ncategory: ~\nvariants: &v [a]\ncomponents: *v\n---\n",
			want: Recipe{Name: "Hero", Components: []string{"a"}, Variants: []string{"a"}},
		},
		{
			name: "empty key then next key",
			in:   "---\nname: Hero\ncomponents:\nvariants: [a]\n---\n",
			want: Recipe{Name: "Hero", Variants: []string{"a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("hero.md", []byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.want.ID = "hero"
			if !cmp.Equal(got, tt.want) {
				t.Errorf("Parse =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		in   string
		want string // the whole error
	}{
		{"no front matter", "x.md", "# Hero\n", "x.md:1: missing front matter: the first line must be ---"},
		{"not closed", "x.md", "---\nname: a\n", "x.md:1: front matter is not closed: no line --- after the opening one"},
		{"no colon", "x.md", "---\nname: a\njust words\n---\n", `x.md:3: could not find expected ':' in "just words"`},
		{"bad key", "x.md", "---\nname: a\nbad key: b\n---\n", `x.md:3: bad key "bad key": use letters, digits, - and _`},
		{"key not a scalar", "x.md", "---\nname: a\n[x]: b\n---\n", `x.md:3: bad key "[x]": use letters, digits, - and _`},
		{"duplicate key", "x.md", "---\nname: a\nname: b\n---\n", `x.md:3: duplicate key "name" (first on line 2)`},
		{"stray item", "x.md", "---\nname: a\n- b\n---\n", `x.md:3: did not find expected key in "- b"`},
		{"empty item", "x.md", "---\nname: a\nvariants:\n  -\n---\n", "x.md:4: empty list item"},
		{"nested item", "x.md", "---\nname: a\nvariants:\n  - a\n  - [b]\n---\n", "x.md:5: list item of variants is not a single value"},
		{"not a mapping", "x.md", "---\n# about\njust words\n---\n", "x.md:3: want key: value lines"},
		{"unclosed list", "x.md", "---\nname: a\nvariants: [a, b\n---\n", `x.md:3: did not find expected ',' or ']' in "variants: [a, b"`},
		{"empty list item", "x.md", "---\nname: a\nvariants: [a,,b]\n---\n", `x.md:3: did not find expected node content in "variants: [a,,b]"`},
		{"bad quote", "x.md", "---\nname: \"abc\n---\n", `x.md:2: found unexpected end of stream in "name: \"abc"`},
		{"colon and space in a plain value", "x.md", "---\nname: Hero: big\n---\n", `x.md:2: mapping values are not allowed in this context in "name: Hero: big"`},
		{"error after a multi-line list", "x.md", "---\nname: a\nvariants: [a,\n  b]\ncategory: x\n- y\n---\n", `x.md:6: did not find expected key in "- y"`},
		{"tab indentation", "x.md", "---\nname: a\nvariants:\n\t- b\n---\n", `x.md:4: found character that cannot start any token in "- b"`},
		{"name is a list", "x.md", "---\nname: [a]\n---\n", "x.md:2: name must be a single value, not a list"},
		{"no name", "x.md", "---\ncategory: a\n---\n", "x.md:1: front matter has no name"},
		{"bad id", "dir/My Hero.md", "---\nname: a\n---\n", `dir/My Hero.md: bad recipe id "My Hero": name the file with lowercase words and digits joined by dashes, like multi-step-wizard.md`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.file, []byte(tt.in))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error is %T, want *ParseError", err)
			}
		})
	}
}

func TestSuggestedFile(t *testing.T) {
	for id, want := range map[string]string{
		"hero":              "src/sections/HeroSection.tsx",
		"multi-step-wizard": "src/sections/MultiStepWizardSection.tsx",
		"cta":               "src/sections/CtaSection.tsx",
		"api-crud":          "src/sections/ApiCrudSection.tsx",
		"faq":               "src/sections/FaqSection.tsx",
	} {
		if got := SuggestedFile(id); got != want {
			t.Errorf("SuggestedFile(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"hero": true, "multi-step-wizard": true, "h1": true,
		"": false, "Hero": false, "-hero": false, "hero-": false, "a--b": false, "a_b": false, "a b": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestLibraryNearest(t *testing.T) {
	lib, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want []string
	}{
		{"heros", []string{"hero"}},
		{"pricng", []string{"pricing"}},
		{"wizard", []string{"multi-step-wizard"}},
		{"Hero", []string{"hero"}},
		{"zzzzzzzz", []string{}},
	}
	for _, tt := range tests {
		got := lib.Nearest(tt.id, 3)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Nearest(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

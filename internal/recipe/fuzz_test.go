package recipe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// FuzzParse checks that Parse never panics, that errors carry a line inside
// the input, and that whatever parses survives a round trip through a
// canonical rendering. The seed corpus is testdata/fuzz/FuzzParse plus the
// embedded library.
func FuzzParse(f *testing.F) {
	entries, err := embedded.ReadDir("library")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		data, err := embedded.ReadFile("library/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("fuzz.md", data)
		if err != nil {
			pe, ok := err.(*ParseError)
			if !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			if pe.File != "fuzz.md" || pe.Line < 1 || pe.Line > strings.Count(string(data), "\n")+1 {
				t.Fatalf("error has file %q line %d, input has %d lines: %v", pe.File, pe.Line, strings.Count(string(data), "\n")+1, err)
			}
			return
		}
		if r.ID != "fuzz" || r.Name == "" {
			t.Fatalf("parsed recipe has id %q name %q", r.ID, r.Name)
		}
		text := render(t, r)
		again, err := Parse("fuzz.md", []byte(text))
		if err != nil {
			t.Fatalf("rendered recipe does not parse: %v\n%s", err, text)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Fatalf("round trip changed the recipe (-before +after):\n%s", diff)
		}
	})
}

// render writes r back out as a recipe file, its front matter written by
// the YAML encoder with every value a string.
func render(t *testing.T, r Recipe) string {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	fm := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) { fm.Content = append(fm.Content, str(key), v) }
	add("name", str(r.Name))
	if r.Category != "" {
		add("category", str(r.Category))
	}
	list := func(key string, items []string) {
		if items == nil {
			return
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		if len(items) == 0 {
			seq.Style = yaml.FlowStyle
		}
		for _, it := range items {
			seq.Content = append(seq.Content, str(it))
		}
		add(key, seq)
	}
	list("components", r.Components)
	list("variants", r.Variants)
	out, err := yaml.Marshal(fm)
	if err != nil {
		t.Fatal(err)
	}
	return "---\n" + string(out) + "---\n" + r.Body
}

package recipe

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
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
		again, err := Parse("fuzz.md", []byte(render(r)))
		if err != nil {
			t.Fatalf("rendered recipe does not parse: %v\n%s", err, render(r))
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip changed the recipe:\n%#v\n%#v", r, again)
		}
	})
}

// render writes r back out as a recipe file with every value quoted.
func render(r Recipe) string {
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString("name: " + strconv.Quote(r.Name) + "\n")
	if r.Category != "" {
		b.WriteString("category: " + strconv.Quote(r.Category) + "\n")
	}
	list := func(key string, items []string) {
		if items == nil {
			return
		}
		q := make([]string, len(items))
		for i, it := range items {
			q[i] = strconv.Quote(it)
		}
		b.WriteString(key + ": [" + strings.Join(q, ", ") + "]\n")
	}
	list("components", r.Components)
	list("variants", r.Variants)
	b.WriteString("---\n")
	b.WriteString(r.Body)
	return b.String()
}

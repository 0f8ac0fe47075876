package plan

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseMarker(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
		want Marker
	}{
		{"TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest)", true, Marker{Kind: Add, Task: 3, Text: "2 nighttime drink flavors (Moonlit Calm, Deep Rest)", Count: 2}},
		{"TASK-3 [ADD]: two new FAQ entries", true, Marker{Kind: Add, Task: 3, Text: "two new FAQ entries", Count: 2}},
		{"TASK-12 [ADD]: add 3 testimonials", true, Marker{Kind: Add, Task: 12, Text: "add 3 testimonials", Count: 3}},
		{"TASK-3 [ADD]: a section for Q3 2025 results", true, Marker{Kind: Add, Task: 3, Text: "a section for Q3 2025 results"}},
		{"TASK-3 [MODIFY]: Refine copy", true, Marker{Kind: Modify, Task: 3, Text: "Refine copy"}},
		{"task-4 [fix] toggle", true, Marker{Kind: Fix, Task: 4, Text: "toggle"}},
		{"TASK-5 [REMOVE]: 1 old plan", true, Marker{Kind: Remove, Task: 5, Text: "1 old plan", Count: 1}},
		{"NO CHANGES for task-3 — preserve as-is", true, Marker{Kind: NoChanges, Task: 3, Text: "NO CHANGES for task-3 — preserve as-is"}},
		{"NO CHANGES", true, Marker{Kind: NoChanges, Text: "NO CHANGES"}},
		{"EXISTING 8 flavors PRESERVED — do not remove or convert", true, Marker{Kind: Preserved, Text: "EXISTING 8 flavors PRESERVED — do not remove or convert", Count: 8}},
		{"PRESERVED for task-3", true, Marker{Kind: Preserved, Task: 3, Text: "PRESERVED for task-3"}},
		{"styles preserved from the old site", false, Marker{}},
		{"no changes needed here", false, Marker{}},
		{"just a note", false, Marker{}},
		{"TASK-3 without a kind", false, Marker{}},
	}
	for _, tt := range tests {
		got, ok := ParseMarker(tt.text)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseMarker(%q) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMutationExampleMarkers(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "mutation.tsx"))
	if err != nil {
		t.Fatal(err)
	}
	root := mustParse(t, string(src))
	got := map[string][]string{}
	for _, s := range Sections(root) {
		for _, m := range s.Markers {
			got[s.Str("gumdrop")] = append(got[s.Str("gumdrop")], m.Kind.String())
		}
	}
	want := map[string][]string{
		"hero":       {"MODIFY"},
		"features":   {"ADD", "PRESERVED"},
		"newsletter": {"REMOVE"},
		"cta":        {"MODIFY"},
	}
	for k, v := range want {
		if len(got[k]) != len(v) || (len(v) > 0 && got[k][0] != v[0]) {
			t.Errorf("section %s markers = %v, want %v", k, got[k], v)
		}
	}
	store := Collect(root, "Screen")[1]
	if len(store.Markers) != 1 || store.Markers[0].Kind != NoChanges || store.Markers[0].Task != 3 {
		t.Errorf("store screen markers = %+v", store.Markers)
	}
	if th := Theme(root); len(th.Markers) != 2 || th.Markers[0].Kind != Fix {
		t.Errorf("theme markers = %+v", th.Markers)
	}
}

package stall

import (
	"strings"
	"testing"
)

func TestGuidanceStuckWritingFeatures(t *testing.T) {
	sections := []Section{
		{Name: "HeroSection", Gumdrop: "hero", File: "src/sections/HeroSection.tsx", Marker: "[MODIFY] refine copy"},
		{Name: "FeaturesSection", Gumdrop: "features", File: "src/sections/FeaturesSection.tsx", Marker: "[ADD] 2 nighttime drink flavors"},
	}
	calls := []Call{
		write("src/sections/FeaturesSection.tsx", "const flavors = [...]"),
		shell("npm", "run", "build"),
		{Name: "edit", Input: raw(`{"file_path":"src/sections/FeaturesSection.tsx","old_string":"a","new_string":"b"}`)},
	}
	d := NewDetector(DefaultConfig())
	var v Verdict
	for i := 4; i <= 6; i++ {
		v = d.Observe(Observation{Iteration: i, Calls: calls, TreeHash: "t"})
	}
	if v.Kind != Repeat {
		t.Fatalf("verdict %v, want repeat", v.Kind)
	}
	sec, ok := FindSection(d.RecentCalls(), sections)
	if !ok {
		t.Fatal("FindSection found no section")
	}
	got := Guidance(GuidanceInput{Verdict: v, Section: sec, LastActions: d.RecentCalls()})

	for _, want := range []string{
		"## Stall recovery (iteration 6)",
		"the same 3 tool calls 3 iterations in a row",
		"FeaturesSection",
		"gumdrop `features`",
		"`src/sections/FeaturesSection.tsx`",
		"Plan marker: [ADD] 2 nighttime drink flavors",
		"1. `write src/sections/FeaturesSection.tsx`",
		"2. `shell npm run build`",
		"3. `edit src/sections/FeaturesSection.tsx`",
		"append them after the existing ones",
		"do not rewrite, convert or reorder them",
		"(2 nighttime drink flavors)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("guidance lacks %q:\n%s", want, got)
		}
	}
}

func TestGuidanceMarkers(t *testing.T) {
	tests := []struct {
		marker string
		want   []string
	}{
		{"[ADD] two flavors", []string{"append them after the existing ones"}},
		{"TASK-3 [ADD]: two flavors", []string{"append them after the existing ones", "(two flavors)"}},
		{"[MODIFY] refine copy", []string{"write the entire section again", "Stop patching it line by line"}},
		{"[FIX] theme toggle", []string{"read the rendered output", "toggle and state logic", "Do not change the section's content"}},
		{"[REMOVE]", []string{"Delete the section's code", "remove its imports"}},
		{"NO CHANGES for task-3", []string{"out of scope", "Undo your edits to `src/X.tsx`"}},
		{"", []string{"Step back", "Re-read `.ralph/task.md`", "different approach", "Plan marker: none"}},
	}
	for _, tt := range tests {
		t.Run(tt.marker, func(t *testing.T) {
			got := Guidance(GuidanceInput{
				Verdict: Verdict{Kind: NoProgress, Count: 3, Iteration: 2, Reason: "no file changed in 3 iterations of tool calls"},
				Section: Section{Name: "X", File: "src/X.tsx", Marker: tt.marker},
			})
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("guidance for %q lacks %q:\n%s", tt.marker, w, got)
				}
			}
		})
	}
}

func TestGuidanceUnknownSection(t *testing.T) {
	got := Guidance(GuidanceInput{
		Verdict:     Verdict{Kind: RepeatedError, Count: 3, Iteration: 9, Reason: "the same error 3 iterations in a row: boom", Evidence: Evidence{Error: "boom"}},
		LastActions: []Call{shell("a"), shell("b"), shell("c"), shell("d")},
	})
	for _, want := range []string{"no plan section could be identified", "```\nboom\n```", "1. `shell b`", "3. `shell d`", "Step back"} {
		if !strings.Contains(got, want) {
			t.Errorf("guidance lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "shell a") {
		t.Errorf("guidance quotes more than the last three actions:\n%s", got)
	}
}

func TestFailureMessage(t *testing.T) {
	got := FailureMessage(3)
	for _, want := range []string{"Task 3 failed", "stuck twice", "`task-3-pre`", "rephrasing", "smaller tasks"} {
		if !strings.Contains(got, want) {
			t.Errorf("FailureMessage(3) lacks %q:\n%s", want, got)
		}
	}
}

func TestWithFeedback(t *testing.T) {
	guidance := "## Stall recovery (iteration 3)\n\nralph stepped in.\n"
	gates := "# Quality Gates Failed\n\n## FAIL [has-summary]\n\nno summary\n"
	tests := []struct {
		name, current string
		want          []string // in this order
		not           []string
	}{
		{"gate failures stay below the guidance", gates, []string{"## Stall recovery (iteration 3)", "ralph stepped in.", "still applies", "# Quality Gates Failed", "## FAIL [has-summary]", "no summary"}, nil},
		{"no feedback yet", "", []string{"## Stall recovery (iteration 3)"}, []string{"still applies", "---"}},
		{"blank feedback", "\n  \n", []string{"ralph stepped in."}, []string{"still applies"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithFeedback(guidance, tt.current)
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("%q missing or out of order in:\n%s", w, got)
				}
				at += i + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("%q should not be in:\n%s", n, got)
				}
			}
		})
	}
}

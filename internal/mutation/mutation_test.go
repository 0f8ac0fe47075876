package mutation

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

func mustParse(t *testing.T, src string) *plan.Node {
	t.Helper()
	root, err := plan.Parse([]byte(src))
	if err != nil {
		t.Fatalf("parse plan: %v\n%s", err, src)
	}
	return root
}

func readPlan(t *testing.T, name string) *plan.Node {
	t.Helper()
	src, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return mustParse(t, string(src))
}

// vibrantTask is task 3 of the VIBRANT ENERGY failure (seed 002 §2), as
// the task parser writes it.
func vibrantTask(t *testing.T) task.Task {
	t.Helper()
	src, err := os.ReadFile("testdata/task3.md")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := task.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestPromptAddition(t *testing.T) {
	p := PromptAddition(3)
	for _, want := range []string{
		"UPDATING .ralph/plan.tsx in place",
		"{/* TASK-3 [ADD]: 2 nighttime drink flavors */}",
		"{/* NO CHANGES for task-3 */}",
		"PRESERVED — do not remove or convert",
		"{/* TASK-3 [REMOVE]: … */}",
		"Never rename, rewrite or\n   repurpose existing items",
		"task-3-pre",
		"ralph plan update",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("PromptAddition(3) lacks %q", want)
		}
	}
	if strings.Contains(p, "{N}") {
		t.Errorf("PromptAddition(3) left a placeholder:\n%s", p)
	}
	if p := PromptAddition(0); !strings.Contains(p, "TASK-N [ADD]") || !strings.Contains(p, "task-N-pre") {
		t.Errorf("PromptAddition(0) should name TASK-N:\n%s", p)
	}
}

func TestAffected(t *testing.T) {
	root := readPlan(t, "vibrant-before.tsx")
	tests := []struct {
		text     string
		affected []string
		want     []string // target labels
	}{
		{"Refine ad copy in hero and CTA sections", nil, []string{"hero", "cta"}},
		{"Refine ad copy in hero and CTA sections", []string{"CtaSection.tsx"}, []string{"cta", "hero"}},
		{"Theme toggle: two moods not switching", nil, []string{"Theme"}},
		{"2 new nighttime drink flavours (keep the existing 8)", nil, []string{"features"}},
		{"make the headline punchier", nil, []string{"hero"}},
		{"add a yearly tier to the prices", nil, []string{"pricing"}},
		{"answer the shipping question in the FAQ", nil, []string{"faq"}},
		{"everything in the store", nil, []string{"pricing", "faq"}},
		{"add a newsletter signup", nil, []string{"cta"}},
		{"integrate with Stripe webhooks", nil, nil},
	}
	for _, tt := range tests {
		tk := task.Task{Requirements: []task.Requirement{{Kind: task.Modify, Text: tt.text}}, AffectedFiles: tt.affected}
		ms := Affected(root, tk)
		if len(ms) != 1 {
			t.Fatalf("%q: %d matches, want 1", tt.text, len(ms))
		}
		var got []string
		for _, tg := range ms[0].Targets {
			got = append(got, tg.Label)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q (affected %v): targets %v, want %v (words %v)", tt.text, tt.affected, got, tt.want, ms[0].Words)
		}
	}
}

func TestAffectedSkipsPlaceholders(t *testing.T) {
	root := readPlan(t, "vibrant-before.tsx")
	tk := task.Template("add 2 more drinks for nighttime", 3, "task-2-post")
	if ms := Affected(root, tk); len(ms) != 0 {
		t.Errorf("Affected on a template = %v, want nothing", ms)
	}
}

func TestTargets(t *testing.T) {
	root := readPlan(t, "vibrant-task3.tsx")
	var got []string
	for _, tg := range Targets(root) {
		got = append(got, tg.String())
	}
	want := []string{
		"Theme",
		"hero (screen landing) → src/sections/HeroSection.tsx",
		"features (screen landing) → src/sections/FlavorGridSection.tsx",
		"cta (screen landing) → src/sections/CtaSection.tsx",
		"pricing (screen store) → src/sections/PricingSection.tsx",
		"faq (screen store) → src/sections/FaqSection.tsx",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Targets:\n got %q\nwant %q", got, want)
	}
}

// finding is a finding reduced to what the tests compare.
type finding struct {
	kind, id string
	line     int
	contains string
}

func TestValidate(t *testing.T) {
	before := readPlan(t, "vibrant-before.tsx")
	after := readPlan(t, "vibrant-task3.tsx")
	vibrant := vibrantTask(t)
	addOnly := task.Task{Type: task.Mutation, Counter: 3, Requirements: []task.Requirement{
		{Kind: task.Add, Text: "2 new nighttime drink flavours (keep the existing 8)"},
	}}
	without := func(src, drop string) string {
		t.Helper()
		if !strings.Contains(src, drop) {
			t.Fatalf("fixture lacks %q", drop)
		}
		return strings.Replace(src, drop, "", 1)
	}
	afterSrc, _ := os.ReadFile("testdata/vibrant-task3.tsx")
	beforeSrc, _ := os.ReadFile("testdata/vibrant-before.tsx")

	tests := []struct {
		name     string
		current  string // plan source; "" means the task-3 fixture
		previous *plan.Node
		task     task.Task
		n        int
		want     []finding
	}{
		{name: "the seed's task-3 plan is clean", previous: before, task: vibrant, n: 3},
		{
			name: "the unchanged plan leaves every requirement unmarked", current: string(beforeSrc), previous: before, task: vibrant, n: 3,
			want: []finding{
				{"warn", RuleRequirementUnmarked, 9, `"[MODIFY] Refine ad copy in hero and CTA sections" of task.md has no TASK-3 [MODIFY] marker`},
				{"warn", RuleRequirementUnmarked, 2, "most likely Theme"},
				{"warn", RuleRequirementUnmarked, 10, "add {/* TASK-3 [ADD]: 2 new nighttime drink flavours (keep the existing 8) */} to the element it changes (most likely features (screen landing) → src/sections/FlavorGridSection.tsx)"},
			},
		},
		{
			name: "markers of an earlier task do not count", current: strings.ReplaceAll(string(afterSrc), "TASK-3", "TASK-2"), previous: before, task: addOnly, n: 3,
			want: []finding{{"warn", RuleRequirementUnmarked, 13, "no TASK-3 [ADD] marker"}},
		},
		{
			name: "an ADD requirement needs an ADD marker, not a MODIFY", current: strings.Replace(string(afterSrc), "TASK-3 [ADD]", "TASK-3 [MODIFY]", 1), previous: before, task: addOnly, n: 3,
			want: []finding{{"warn", RuleRequirementUnmarked, 13, "no TASK-3 [ADD] marker"}},
		},
		{
			name: "the only requirement of its kind is carried by any marker of that kind", previous: before, n: 3,
			task: task.Task{Counter: 3, Requirements: []task.Requirement{{Kind: task.Fix, Text: "the lights are wrong"}}},
		},
		{
			name: "two requirements of a kind each need a marker that shares a word", previous: before, n: 3,
			task: task.Task{Counter: 3, Requirements: []task.Requirement{
				{Kind: task.Add, Text: "2 nighttime drinks"},
				{Kind: task.Add, Text: "a yearly subscription tier"},
			}},
			want: []finding{{"warn", RuleRequirementUnmarked, 25, "most likely pricing (screen store)"}},
		},
		{
			name: "an unclassified requirement is carried by a marker of any kind", previous: before, n: 3,
			task: task.Task{Counter: 3, Requirements: []task.Requirement{{Kind: task.Open, Text: "nighttime drinks"}}},
		},
		{
			name: "a requirement no section fits", previous: before, n: 3,
			task: task.Task{Counter: 3, Requirements: []task.Requirement{{Kind: task.Add, Text: "Stripe webhooks"}, {Kind: task.Add, Text: "nighttime drinks"}}},
			want: []finding{{"warn", RuleRequirementUnmarked, 0, "or a new <Section> with that marker if no section fits"}},
		},
		{
			name: "a section dropped without a marker fails", current: without(string(afterSrc), `<Section gumdrop="faq" />`), previous: before, task: vibrant, n: 3,
			want: []finding{{"fail", RuleSectionRemovedUnmarked, 23, `section "faq" of screen "store" (src/sections/FaqSection.tsx) was in the plan when task 3 started and is gone, with no [REMOVE] marker for task 3`}},
		},
		{
			name: "a whole screen dropped fails once per section", current: without(string(afterSrc), "<Screen name=\"store\">\n    {/* NO CHANGES for task-3 — preserve as-is */}\n    <Section gumdrop=\"pricing\" />\n    <Section gumdrop=\"faq\" />\n  </Screen>"),
			previous: before, task: vibrant, n: 3,
			want: []finding{
				{"fail", RuleSectionRemovedUnmarked, 0, `section "pricing" of screen "store"`},
				{"fail", RuleSectionRemovedUnmarked, 0, `section "faq" of screen "store"`},
			},
		},
		{
			name: "a [REMOVE] marker on the section's screen accounts for it", previous: before, task: vibrant, n: 3,
			current: strings.Replace(without(string(afterSrc), `<Section gumdrop="faq" />`), "{/* NO CHANGES for task-3 — preserve as-is */}", "{/* TASK-3 [REMOVE]: the questions block */}", 1),
		},
		{
			name: "a [REMOVE] marker elsewhere that names the section accounts for it", previous: before, task: vibrant, n: 3,
			current: strings.Replace(without(string(afterSrc), `<Section gumdrop="faq" />`), "{/* TASK-3 [FIX]:", "{/* TASK-3 [REMOVE]: drop the FAQ */}\n    {/* TASK-3 [FIX]:", 1),
		},
		{
			name: "a [REMOVE] marker of another task does not", previous: before, task: vibrant, n: 3,
			current: strings.Replace(without(string(afterSrc), `<Section gumdrop="faq" />`), "{/* NO CHANGES for task-3 — preserve as-is */}", "{/* TASK-2 [REMOVE]: faq */}", 1),
			want:    []finding{{"fail", RuleSectionRemovedUnmarked, 23, `section "faq"`}},
		},
		{
			name: "a section moved to another screen is not removed", previous: before, task: vibrant, n: 3,
			current: strings.Replace(without(string(afterSrc), `<Section gumdrop="faq" />`), `<Section gumdrop="cta">`, "<Section gumdrop=\"faq\" />\n      <Section gumdrop=\"cta\">", 1),
		},
		{
			name: "changing a section's gumdrop removes the old one", previous: before, task: vibrant, n: 3,
			current: strings.Replace(string(afterSrc), `<Section gumdrop="faq" />`, `<Section gumdrop="contact" />`, 1),
			want:    []finding{{"fail", RuleSectionRemovedUnmarked, 23, `section "faq"`}},
		},
		{
			name: "duplicate sections are counted", task: vibrant, n: 3,
			previous: mustParse(t, strings.Replace(string(beforeSrc), `<Section gumdrop="faq" />`, "<Section gumdrop=\"faq\" />\n    <Section gumdrop=\"faq\" />", 1)),
			want:     []finding{{"fail", RuleSectionRemovedUnmarked, 23, `section "faq"`}},
		},
		{name: "no previous plan: no removal check", current: without(string(afterSrc), `<Section gumdrop="faq" />`), task: vibrant, n: 3},
		{
			name: "a template task and no markers", current: string(beforeSrc), previous: before, n: 3,
			task: task.Template("add 2 more drinks for nighttime", 3, "task-2-post"),
			want: []finding{{"warn", RuleNoTaskMarkers, 0, "the plan has no change marker for task 3 and task.md lists no requirement"}},
		},
		{name: "a template task with markers", previous: before, n: 3, task: task.Template("add 2 more drinks for nighttime", 3, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := after
			if tt.current != "" {
				cur = mustParse(t, tt.current)
			}
			res := Validate(cur, tt.previous, tt.task, tt.n)
			var got []finding
			for _, f := range res.Failures {
				got = append(got, finding{"fail", f.ID, f.Line, f.Message})
			}
			for _, f := range res.Warnings {
				got = append(got, finding{"warn", f.ID, f.Line, f.Message})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d findings, want %d:\n%s", len(got), len(tt.want), dump(got))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.kind != w.kind || g.id != w.id || g.line != w.line || !strings.Contains(g.contains, w.contains) {
					t.Errorf("finding %d:\n got %s %s line %d: %s\nwant %s %s line %d containing %q", i, g.kind, g.id, g.line, g.contains, w.kind, w.id, w.line, w.contains)
				}
			}
		})
	}
}

func dump(fs []finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.kind + " [" + f.id + "] " + f.contains + "\n")
	}
	return b.String()
}

func TestValidateNilPlan(t *testing.T) {
	if res := Validate(nil, nil, task.Task{}, 3); len(res.Failures)+len(res.Warnings) != 0 {
		t.Errorf("Validate(nil) = %+v, want nothing", res)
	}
}

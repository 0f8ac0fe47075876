package mutation

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/task"
)

func TestContext(t *testing.T) {
	vibrant := vibrantTask(t)
	tests := []struct {
		name    string
		plan    string
		task    task.Task
		want    []string
		notWant []string
	}{
		{
			name: "before the update", plan: "vibrant-before.tsx", task: vibrant,
			want: []string{
				"# Plan update for task 3: Refine VIBRANT ENERGY landing page\n",
				"Type: mutation. Update .ralph/plan.tsx in place",
				"  Screen \"landing\" (line 7)\n",
				"    - features cols={4} (line 10) → src/sections/FlavorGridSection.tsx\n",
				"1. [MODIFY] Refine ad copy in hero and CTA sections\n" +
					"   likely: hero (screen landing) → src/sections/HeroSection.tsx (line 9)\n" +
					"   likely: cta (screen landing) → src/sections/CtaSection.tsx (line 11)\n" +
					"   matched words: copy, cta, hero\n" +
					"   marked: not yet\n",
				"2. [FIX] Theme toggle: two moods not switching\n   likely: Theme (line 2)\n",
				"3. [ADD] 2 new nighttime drink flavours (keep the existing 8)\n   likely: features (screen landing) → src/sections/FlavorGridSection.tsx (line 10)\n",
				"- PRESERVE: All 8 existing energy drink flavours unchanged\n   likely: features (screen landing)",
				"- AFFECTED FILE: FlavorGrid.tsx → features (screen landing) → src/sections/FlavorGridSection.tsx\n",
				"WARN [requirement-unmarked] plan.tsx:10:7: requirement \"[ADD] 2 new nighttime drink flavours (keep the existing 8)\"",
				"Sections with no marker for task 3 (mark them NO CHANGES if the task leaves them alone):\n- hero (screen landing)",
				"- faq (screen store) → src/sections/FaqSection.tsx\n",
			},
		},
		{
			name: "after the update", plan: "vibrant-task3.tsx", task: vibrant,
			want: []string{
				"    » line 3: TASK-3 [FIX]: Debug voltage/chrome toggle switching\n",
				"    - features cols={5} (line 13) → src/sections/FlavorGridSection.tsx\n" +
					"        » line 14: TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest) (2 items)\n" +
					"        » line 15: EXISTING 8 flavors PRESERVED — do not remove or convert (8 items)\n",
				"  Screen \"store\" (line 23)\n    » line 24: NO CHANGES for task-3 — preserve as-is\n",
				"   marked: line 14: TASK-3 [ADD]: 2 nighttime drink flavors (Moonlit Calm, Deep Rest)\n",
				"   marked: line 3: TASK-3 [FIX]: Debug voltage/chrome toggle switching\n",
				"Every requirement has a TASK-3 marker.\n",
			},
			notWant: []string{"Sections with no marker", "WARN", "marked: not yet"},
		},
		{
			name: "a template task", plan: "vibrant-before.tsx", task: task.Template("add 2 more drinks for nighttime", 3, "none"),
			want: []string{
				"Type: pending. Plan updates with change markers are for mutation tasks",
				"task.md lists no requirement yet: decompose the Original Message",
				"WARN [no-task-markers]: the plan has no change marker for task 3",
			},
			notWant: []string{"## Scope", "AFFECTED FILE"},
		},
		{
			name: "a requirement nothing matches", plan: "vibrant-before.tsx",
			task: task.Task{Title: "hooks", Type: task.Mutation, Counter: 4, Requirements: []task.Requirement{{Kind: task.Add, Text: "Stripe webhooks"}}, AffectedFiles: []string{"src/api/stripe.ts"}},
			want: []string{
				"# Plan update for task 4: hooks\n",
				"   likely: no section shares a word with it; pick one, or add a new <Section> with an [ADD] marker\n",
				"- AFFECTED FILE: src/api/stripe.ts → no section of the plan names it\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Context(readPlan(t, tt.plan), tt.task)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Context lacks\n%s\n--- got:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("Context has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestContextEmptyPlan(t *testing.T) {
	got := Context(nil, task.Task{Counter: 2, Type: task.Mutation})
	if !strings.Contains(got, "(empty plan)") {
		t.Errorf("Context(nil) = %s", got)
	}
}

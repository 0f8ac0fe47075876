package mutation

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// The tests of seed 002 Phase 3 (plan mutation protocol). ralph does not
// rewrite the plan itself: the agent does, following PromptAddition, and
// the harness checks the result. So each test classifies the message as
// the task parser does and checks the plan an agent following the prompt
// writes.

// Existing plan.tsx + "add 2 items" task → the plan has an [ADD] marker and
// the existing sections have NO CHANGES.
func TestPhase3AddItemsMarksAddAndNoChanges(t *testing.T) {
	const msg = "add 2 more drinks for nighttime"
	if got := task.Classify(msg, true); got != task.Mutation {
		t.Fatalf("Classify(%q, plan exists) = %s, want mutation", msg, got)
	}
	tk := task.Task{Title: msg, Type: task.Mutation, Counter: 3, Original: msg,
		Requirements: []task.Requirement{{Kind: task.Add, Text: "2 new nighttime drinks (keep the existing 8)"}},
		Preserve:     []string{"the 8 existing flavors"},
	}
	before := readPlan(t, "vibrant-before.tsx")
	after := readPlan(t, "vibrant-add-only.tsx")

	if res := Validate(after, before, tk, 3); len(res.Failures)+len(res.Warnings) != 0 {
		t.Fatalf("Validate: %+v", res)
	}
	if res := plan.Validate(after, plan.DefaultRegistries()); !res.OK() {
		t.Fatalf("plan.Validate: %+v", res.Failures)
	}
	var adds int
	for _, tg := range Targets(after) {
		if tg.screenNode == nil {
			continue
		}
		kinds := map[plan.MarkerKind]bool{}
		for _, n := range plan.Path(after, tg.Node)[1:] {
			for _, m := range n.Markers {
				kinds[m.Kind] = true
			}
		}
		switch tg.Label {
		case "features":
			if !kinds[plan.Add] || !kinds[plan.Preserved] {
				t.Errorf("features markers %v, want ADD and PRESERVED", kinds)
			}
			adds++
		default:
			if !kinds[plan.NoChanges] || len(kinds) != 1 {
				t.Errorf("%s markers %v, want NO CHANGES only", tg.Label, kinds)
			}
		}
	}
	if adds != 1 {
		t.Errorf("%d sections with [ADD], want 1", adds)
	}
	ctx := Context(after, tk)
	if !strings.Contains(ctx, "Every requirement has a TASK-3 marker.") || strings.Contains(ctx, "Sections with no marker") {
		t.Errorf("Context of the marked plan:\n%s", ctx)
	}

	// The plan as it was, unchanged, leaves the requirement unmarked and
	// every section without a marker.
	res := Validate(before, before, tk, 3)
	if len(res.Warnings) != 1 || res.Warnings[0].ID != RuleRequirementUnmarked {
		t.Errorf("Validate(unchanged plan) = %+v, want one requirement-unmarked", res)
	}
	if ctx := Context(before, tk); !strings.Contains(ctx, "Sections with no marker for task 3") {
		t.Errorf("Context of the unchanged plan does not list unmarked sections:\n%s", ctx)
	}
}

// Existing plan.tsx + "fix bug" → a bug fix, which skips the plan update
// (the engine sends bugfix tasks straight to BUILD; see
// internal/cli/testdata/script/mutation_routing.txtar).
func TestPhase3FixBugIsBugfix(t *testing.T) {
	for _, msg := range []string{"fix the theme toggle, it is broken", "the mood switch doesn't work"} {
		if got := task.Classify(msg, true); got != task.Bugfix {
			t.Errorf("Classify(%q, plan exists) = %s, want bugfix", msg, got)
		}
	}
}

// No plan.tsx + any task → a fresh plan.
func TestPhase3NoPlanIsFresh(t *testing.T) {
	for _, msg := range []string{"add 2 more drinks for nighttime", "a landing page for an energy drink", "build me a dashboard"} {
		if got := task.Classify(msg, false); got != task.Fresh {
			t.Errorf("Classify(%q, no plan) = %s, want fresh", msg, got)
		}
	}
}

package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
)

const diffPlan = `<App name="Shop" description="A shop">
  <Theme mood="mono" />
  <Screen name="home">
    <Section gumdrop="hero" variant="centered" />
    <Section gumdrop="pricing" />
    <Section gumdrop="faq" file="src/components/Questions.tsx" />
  </Screen>
</App>
`

func TestPlanDiff(t *testing.T) {
	tsx := "export function X() { return <section>x</section> }\n"
	all := map[string]string{
		".ralph/plan.tsx":                 diffPlan,
		"src/sections/HeroSection.tsx":    tsx,
		"src/sections/PricingSection.tsx": tsx,
		"src/components/Questions.tsx":    tsx,
	}
	without := func(drop ...string) map[string]string {
		out := map[string]string{}
		for k, v := range all {
			out[k] = v
		}
		for _, d := range drop {
			delete(out, d)
		}
		return out
	}
	plus := func(files map[string]string, add ...string) map[string]string {
		for _, a := range add {
			files[a] = tsx
		}
		return files
	}
	tests := []struct {
		name   string
		files  map[string]string
		gate   PlanDiff
		status Status
		msgs   []string
	}{
		{"no plan", map[string]string{"src/sections/HeroSection.tsx": tsx}, PlanDiff{}, Skip, []string{"no plan to compare"}},
		{"orchestration plan", map[string]string{".ralph/plan.tsx": themelessPlan}, PlanDiff{}, Skip, []string{"a <Plan> plan has no sections to compare"}},
		{"agree", all, PlanDiff{}, Pass, []string{"3 sections"}},
		{"tests, stories and index files are not unplanned", plus(without(), "src/sections/HeroSection.test.tsx", "src/sections/index.ts", "src/sections/HeroSection.stories.tsx"), PlanDiff{}, Pass, []string{"every planned section"}},
		{"missing section file", without("src/sections/PricingSection.tsx"), PlanDiff{}, Warn,
			[]string{"1 section in the plan without a source file", "- pricing (plan.tsx:5) → src/sections/PricingSection.tsx"}},
		{"missing file prop file", without("src/components/Questions.tsx"), PlanDiff{}, Warn, []string{"- faq (plan.tsx:6) → src/components/Questions.tsx"}},
		{"unplanned file", plus(without(), "src/sections/GallerySection.tsx"), PlanDiff{}, Warn,
			[]string{"1 file under src/sections/ that no section of the plan names", "- src/sections/GallerySection.tsx"}},
		{"both", plus(without("src/sections/HeroSection.tsx"), "src/sections/TeamSection.jsx"), PlanDiff{}, Warn,
			[]string{"- hero (centered) (plan.tsx:4)", "- src/sections/TeamSection.jsx"}},
		{"unparseable plan warns", map[string]string{".ralph/plan.tsx": "<App name="}, PlanDiff{}, Warn, []string{"cannot be read", "plan.tsx:1"}},
		{"plan from the engine", map[string]string{}, PlanDiff{Plan: func() (*plan.Node, error) { return plan.Parse([]byte(diffPlan)) }}, Warn, []string{"3 sections in the plan without a source file"}},
		{"plan error from the engine", map[string]string{}, PlanDiff{Plan: func() (*plan.Node, error) { return nil, errors.New("boom") }}, Warn, []string{"boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range tt.files {
				writeFile(t, root, rel, content)
			}
			r := tt.gate.Check(context.Background(), Env{Root: root})
			if r.Status != tt.status {
				t.Fatalf("got %s %q, want %s", r.Status, r.Message, tt.status)
			}
			for _, m := range tt.msgs {
				if !strings.Contains(r.Message, m) {
					t.Errorf("message lacks %q:\n%s", m, r.Message)
				}
			}
			if r.Status == Fail {
				t.Error("plan-diff is information only")
			}
			if r.Status == Warn && r.Fix == "" {
				t.Error("a warning without a suggestion")
			}
		})
	}
}

func TestPlanDiffLongListsAreCut(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".ralph/plan.tsx", diffPlan)
	for i := range 30 {
		writeFile(t, root, fmt.Sprintf("src/sections/Extra%02dSection.tsx", i), "x")
	}
	r := (&PlanDiff{}).Check(context.Background(), Env{Root: root})
	if r.Status != Warn || !strings.Contains(r.Message, "30 files under") || !strings.Contains(r.Message, "… and 10 more") {
		t.Fatalf("got %s %q", r.Status, r.Message)
	}
}

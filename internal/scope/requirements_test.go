package scope

import (
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// The landing page of a tea shop, as a mutation task finds it and as an
// honest agent leaves it.
var (
	heroPre  = []byte("export const Hero = () => (\n  <header>\n    <h1>Tea for everyone</h1>\n    <p>Leaves, water, time.</p>\n  </header>\n)\n")
	heroPost = []byte("export const Hero = () => (\n  <header>\n    <h1>Tea for people who take it seriously</h1>\n    <p>Single-estate leaves, brewed right.</p>\n  </header>\n)\n")
	ctaPre   = []byte("export const Cta = () => <a className=\"btn\" href=\"/store\">Buy now</a>\n")
	ctaPost  = []byte("export const Cta = () => <a className=\"btn\" href=\"/signup\">Start a subscription</a>\n")
	featPre  = []byte("export const Features = () => (\n  <ul>\n    <li className=\"feature\">Free shipping</li>\n    <li className=\"feature\">Loyalty points</li>\n    <li className=\"feature\">Gift wrapping</li>\n  </ul>\n)\n")
	featPost = []byte("export const Features = () => (\n  <ul>\n    <li className=\"feature\">Free shipping</li>\n    <li className=\"feature\">Gift wrapping</li>\n  </ul>\n)\n")
	tierPre  = []byte("const tiers = [\n  { name: 'Starter', price: 9 },\n  { name: 'Pro', price: 29 },\n]\n\nexport const Pricing = () => <div>{tiers.map((t) => <Tier key={t.name} {...t} />)}</div>\n")
	tierPost = []byte("const tiers = [\n  { name: 'Starter', price: 9 },\n  { name: 'Pro', price: 29 },\n  { name: 'Enterprise', price: 99 },\n]\n\nexport const Pricing = () => <div>{tiers.map((t) => <Tier key={t.name} {...t} />)}</div>\n")
)

// teaTask is task 3 of the tea shop: four marked requirements, the last
// three of them in a different order in the plan than in task.md.
func teaTask(hero, cta, feat, tier []byte, fixCheck *CheckRun) Input {
	v := func(pre, now []byte) (Version, Version) {
		return Version{Present: true, Src: pre}, Version{Present: now != nil, Src: now}
	}
	target := func(name, file string, m plan.Marker, pre, now []byte) Target {
		b, n := v(pre, now)
		m.Task = 3
		return Target{Section: Section{Name: name, File: file, Markers: []plan.Marker{m}}, Before: b, Now: n}
	}
	reqs := []Requirement{
		{N: 1, Kind: task.Modify, Text: "Refine the hero copy: less generic, more adult"},
		{N: 2, Kind: task.Fix, Text: "the CTA links to /signup", Check: []string{"npm", "test", "--", "cta"}, Ran: fixCheck},
		{N: 3, Kind: task.Remove, Text: "the loyalty points feature"},
		{N: 4, Kind: task.Add, Text: "an enterprise pricing tier"},
	}
	return Input{
		Task:         3,
		Requirements: reqs,
		Targets: []Target{
			target("pricing", "src/sections/PricingSection.tsx", plan.Marker{Kind: plan.Add, Text: "TASK-3 [ADD]: Enterprise tier"}, tierPre, tier),
			target("hero", "src/sections/HeroSection.tsx", plan.Marker{Kind: plan.Modify, Text: "TASK-3 [MODIFY]: adult copy"}, heroPre, hero),
			target("features", "src/sections/FeaturesSection.tsx", plan.Marker{Kind: plan.Remove, Text: "TASK-3 [REMOVE]: loyalty points"}, featPre, feat),
			target("cta", "src/sections/CtaSection.tsx", plan.Marker{Kind: plan.Fix, Text: "TASK-3 [FIX]: link to signup"}, ctaPre, cta),
		},
	}
}

// TestCheckRequirementsIgnored is the task that made zero changes: every
// requirement fails on its own line, naming itself in task.md.
func TestCheckRequirementsIgnored(t *testing.T) {
	fs := Check(teaTask(heroPre, ctaPre, featPre, tierPre, &CheckRun{Passed: false, Output: "FAIL cta.test.ts\n  expected /signup, got /store\n"}))
	want := map[int]string{
		1: `task.md requirement 1 [MODIFY] "Refine the hero copy: less generic, more adult" not done: hero (src/sections/HeroSection.tsx) is unchanged since task-3-pre`,
		2: `task.md requirement 2 [FIX] "the CTA links to /signup" not done: cta (src/sections/CtaSection.tsx) is unchanged since task-3-pre`,
		3: `task.md requirement 3 [REMOVE] "the loyalty points feature" not done: features (src/sections/FeaturesSection.tsx) is unchanged since task-3-pre`,
		4: `pricing (src/sections/PricingSection.tsx): [ADD] but no new items detected: had 2 items, now has 2`,
	}
	if len(fs) != 4 {
		t.Fatalf("got %d findings, want 4: %+v", len(fs), fs)
	}
	for _, f := range fs {
		if f.Status != Fail {
			t.Errorf("requirement %d: %v %q, want fail", f.Requirement, f.Status, f.Message)
		}
		if w := want[f.Requirement]; f.Requirement != 4 && f.Message != w {
			t.Errorf("requirement %d:\n got %q\nwant %q", f.Requirement, f.Message, w)
		}
		if f.Requirement == 4 && !strings.Contains(f.Message, `task.md requirement 4 [ADD] "an enterprise pricing tier" not done: pricing (src/sections/PricingSection.tsx) is unchanged since task-3-pre`) {
			t.Errorf("requirement 4: %q", f.Message)
		}
	}
	if fix := fs[3].Fix; !strings.Contains(fix, "Then `npm test -- cta` must pass.") {
		t.Errorf("FIX fix = %q, want it to name the requirement's check", fix)
	}
}

// TestCheckRequirementsHonest: the same task done passes, and its [FIX]
// passes only once its own check does.
func TestCheckRequirementsHonest(t *testing.T) {
	fs := Check(teaTask(heroPost, ctaPost, featPost, tierPost, &CheckRun{Passed: true}))
	for _, f := range fs {
		if f.Status != Pass {
			t.Errorf("requirement %d: %v %q", f.Requirement, f.Status, f.Message)
		}
	}
	if len(fs) != 4 {
		t.Errorf("got %d findings, want 4", len(fs))
	}

	fs = Check(teaTask(heroPost, ctaPost, featPost, tierPost, &CheckRun{Passed: false, Output: "  expected /signup, got /store\n"}))
	var fix Finding
	for _, f := range fs {
		if f.Requirement == 2 {
			fix = f
		}
	}
	want := "cta (src/sections/CtaSection.tsx): changed, but the requirement's check `npm test -- cta` still fails: expected /signup, got /store — task.md requirement 2 [FIX] \"the CTA links to /signup\""
	if fix.Status != Fail || fix.Message != want {
		t.Errorf("FIX with a failing check: %v %q\nwant fail %q", fix.Status, fix.Message, want)
	}
}

// TestCheckUnmarkedRequirements: requirements no plan section carries.
func TestCheckUnmarkedRequirements(t *testing.T) {
	reqs := []Requirement{{N: 1, Kind: task.Fix, Text: "the date parser drops time zones"}}
	tests := []struct {
		name string
		in   Input
		want Status
		msg  string
	}{
		{"nothing changed", Input{Task: 2, Requirements: reqs, ChangedKnown: true}, Fail,
			`task.md requirement 1 [FIX] "the date parser drops time zones" not done: nothing in the project changed since task-2-pre`},
		{"changed, no plan markers", Input{Task: 2, Requirements: reqs, ChangedKnown: true, Changed: []string{"date.go"}}, Pass,
			"the project changed since task-2-pre (1 file); the requirement itself is verified by the gates as a whole"},
		{"its check fails", Input{Task: 2, Requirements: []Requirement{{N: 1, Kind: task.Fix, Text: "tz", Check: []string{"go", "test", "./date"}, Ran: &CheckRun{Output: "--- FAIL: TestZone"}}},
			ChangedKnown: true, Changed: []string{"date.go"}}, Fail, "not done: its check `go test ./date` fails: --- FAIL: TestZone"},
		{"the plan marks others", Input{Task: 2, Requirements: append(reqs, Requirement{N: 2, Kind: task.Add, Text: "a tier"}), ChangedKnown: true, Changed: []string{"a"},
			Targets: []Target{{Section: Section{Name: "pricing", File: "p.tsx", Markers: []plan.Marker{{Kind: plan.Add, Task: 2}}},
				Before: Version{Present: true, Src: tierPre}, Now: Version{Present: true, Src: tierPost}}}}, Warn,
			"is carried by no section of the plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *Finding
			for _, f := range Check(tt.in) {
				if f.Requirement == 1 {
					got = &f
				}
			}
			if got == nil {
				t.Fatal("no finding for requirement 1")
			}
			if got.Status != tt.want || !strings.Contains(got.Message, tt.msg) {
				t.Errorf("got %v %q, want %v containing %q", got.Status, got.Message, tt.want, tt.msg)
			}
		})
	}
}

// TestPreservedNamesItemsByText: a PRESERVED violation names the items
// that went by what a person sees on the page or by their key, never by
// the class name they share.
func TestPreservedNamesItemsByText(t *testing.T) {
	menuMap := func(names ...string) []byte {
		var b strings.Builder
		b.WriteString("const teas = [\n")
		for _, n := range names {
			b.WriteString("  { id: '" + strings.ToLower(n) + "', name: '" + n + "', origin: 'Fujian', className: 'drink' },\n")
		}
		b.WriteString("]\n\nexport function Menu() {\n  return (\n    <ul className=\"menu\">\n      {teas.map((tea) => (\n        <li key={tea.id} className=\"drink\">\n          <h3>{tea.name}</h3>\n          <span className=\"origin\">{tea.origin}</span>\n        </li>\n      ))}\n    </ul>\n  )\n}\n")
		return []byte(b.String())
	}
	menuList := func(names ...string) []byte {
		var b strings.Builder
		b.WriteString("export function Menu() {\n  return (\n    <ul className=\"menu\">\n")
		for _, n := range names {
			b.WriteString("      <li className=\"drink\">" + n + "</li>\n")
		}
		b.WriteString("    </ul>\n  )\n}\n")
		return []byte(b.String())
	}
	menuKeyed := func(names ...string) []byte {
		var b strings.Builder
		b.WriteString("export const Menu = () => (\n  <div>\n")
		for _, n := range names {
			b.WriteString("    <TeaCard className=\"drink\" key=\"" + strings.ToLower(n) + "\" />\n")
		}
		b.WriteString("  </div>\n)\n")
		return []byte(b.String())
	}
	all := []string{"Jasmine Pearl", "Oolong", "Sencha", "Earl Grey", "Assam", "Darjeeling"}
	kept := []string{"Sencha", "Assam"}
	for _, tc := range []struct {
		name    string
		menu    func(...string) []byte
		missing string
	}{
		{".map over objects with name fields", menuMap, `"Jasmine Pearl", "Oolong", "Earl Grey", "Darjeeling"`},
		{"repeated <li> with text", menuList, `"Jasmine Pearl", "Oolong", "Earl Grey", "Darjeeling"`},
		{"repeated elements with keys only", menuKeyed, `"jasmine pearl", "oolong", "earl grey", "darjeeling"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := Check(Input{
				Preserve: []string{"All six teas on the menu", "The footer"},
				Targets: []Target{{
					Section: Section{Name: "menu", File: "src/sections/MenuSection.tsx", Markers: []plan.Marker{{Kind: plan.Preserved, Task: 3, Text: "EXISTING 6 teas PRESERVED"}}},
					Before:  Version{Present: true, Src: tc.menu(all...)},
					Now:     Version{Present: true, Src: tc.menu(kept...)},
				}},
			})
			if len(fs) != 1 || fs[0].Status != Fail {
				t.Fatalf("findings = %+v, want one failure", fs)
			}
			if !strings.Contains(fs[0].Fix, "Missing: "+tc.missing+".") {
				t.Errorf("fix = %q, want it to name %s", fs[0].Fix, tc.missing)
			}
			if strings.Contains(fs[0].Fix, `"drink"`) {
				t.Errorf("fix names items by their class name: %q", fs[0].Fix)
			}
			if want := `PRESERVED violation: menu had 6 items, now has 2 (src/sections/MenuSection.tsx) (task.md: PRESERVE "All six teas on the menu")`; fs[0].Message != want {
				t.Errorf("message = %q\nwant %q", fs[0].Message, want)
			}
		})
	}
	// Converted in place, the count kept: the message itself names them.
	fs := Check(Input{Targets: []Target{{
		Section: Section{Name: "menu", File: "src/sections/MenuSection.tsx", Markers: []plan.Marker{{Kind: plan.Preserved, Task: 3}}},
		Before:  Version{Present: true, Src: menuList(all...)},
		Now:     Version{Present: true, Src: menuList("Jasmine Pearl", "Oolong", "Sencha", "Earl Grey", "Chamomile", "Rooibos")},
	}}})
	if want := `PRESERVED violation: menu had 6 items, 2 of them changed or gone: "Assam", "Darjeeling" (src/sections/MenuSection.tsx)`; len(fs) != 1 || fs[0].Message != want {
		t.Errorf("converted: %+v\nwant message %q", fs, want)
	}
}

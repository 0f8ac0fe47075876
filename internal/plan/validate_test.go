package plan

import (
	"strings"
	"testing"
)

// app returns a valid app plan with extra inserted before </App> and the
// screen's sections replaced when sections is not "".
func app(theme, sections, extra string) string {
	if theme == "" {
		theme = `<Theme mood="minimal" />`
	}
	if sections == "" {
		sections = `<Section gumdrop="hero" />
    <Section gumdrop="features" />
    <Section gumdrop="cta" />`
	}
	return `<App name="a">
  ` + theme + `
  <Nav><NavItem label="Home" screen="home" /></Nav>
  <Screen name="home">
    ` + sections + `
  </Screen>
  ` + extra + `
</App>`
}

func orch(body string) string {
	return "<Plan name=\"p\">\n  " + body + "\n</Plan>"
}

const step = `<Phase name="one"><Step name="s">Do it.</Step></Phase>`

func TestValidateRules(t *testing.T) {
	tests := []struct {
		id       string
		warn     bool
		pass     string
		fail     string
		failLine int
		msg      string // a part of the failing message
	}{
		{RuleParseable, false, app("", "", ""), "<App>\n<Theme", 2, "unterminated <Theme> tag"},
		{RuleHasAppRoot, false, app("", "", ""), `<Screen name="x"><Section gumdrop="hero" /></Screen>`, 1, "root must be <App"},
		{RuleUnknownComponent, false, app("", "", ""), app("", "", `<Sectoin gumdrop="faq" />`), 9, `<Sectoin> is not a plan component (did you mean "Section"?)`},
		{RuleUnknownProp, false, app("", "", ""), app("", `<Section gumdrop="hero" varient="x" />`, ""), 5, `<Section> has no prop varient (did you mean "variant"?)`},
		{RulePropType, false, app("", `<Section gumdrop="features" cols={3} />`, ""), app("", `<Section gumdrop="features" cols="3" />`, ""), 5, "<Section cols> must be a number, not a string: write cols={3} without quotes"},
		{RulePropType, false, app(`<Theme mood="Zen" shadowProfile="subtle" radius="Pill" />`, "", ""), app(`<Theme mood="zen" shadowProfile="soft" />`, "", ""), 2, `<Theme shadowProfile="soft"> is not one of the accepted values`},
		{RulePropType, false, app("", "", ""), strings.Replace(app("", "", ""), `<Screen name="home">`, `<Screen name="home" layout="fullbleed">`, 1), 4, `(did you mean "full-bleed"?)`},
		{RuleRequiredProp, false, app("", "", ""), strings.Replace(app("", "", ""), `<Screen name="home">`, `<Screen>`, 1), 4, `<Screen> needs a name prop: <Screen name="…">`},
		{RuleRequiredProp, false, app(`<Theme mood="zen"><Rule no="x" /></Theme>`, "", ""), app(`<Theme mood="zen"><Rule /></Theme>`, "", ""), 2, "<Rule> needs one of the props no, always, prefer"},
		{RuleInvalidNesting, false, app("", "", ""), app("", `<Section gumdrop="hero"><Screen name="x"><Section gumdrop="faq" /></Screen></Section>`, ""), 5, "<Screen> cannot be inside <Section>: <Section> may contain Gumdrop"},
		{RuleHasTheme, false, app("", "", ""), app(" ", "", ""), 1, "<App> has no <Theme>"},
		{RuleHasScreens, false, app("", "", ""), `<App name="a"><Theme mood="zen" /></App>`, 1, "<App> has no <Screen>"},
		{RuleValidMood, false, app(`<Theme mood="cyberpunk" />`, "", ""), app(`<Theme mood="playfull" />`, "", ""), 2, `<Theme mood="playfull"> is neither a mood nor a preset (did you mean "playful"?)`},
		{RuleValidFont, false, app(`<Theme mood="zen" font="Geist" monoFont="jetbrains-mono" />`, "", ""), app(`<Theme mood="zen" monoFont="JetBrainz Mono" />`, "", ""), 2, `<Theme monoFont="JetBrainz Mono"> is not a curated font (did you mean "JetBrains Mono"?)`},
		{RuleValidPattern, false, app(`<Theme seed={10} pattern="golden-ratio" />`, "", ""), app(`<Theme seed={10} pattern="goldenRatios" />`, "", ""), 2, `(did you mean "goldenRatio"?)`},
		{RuleValidGumdrops, false, app("", "", ""), app("", `<Section gumdrop="hero-section" /><Section gumdrop="faq" /><Section gumdrop="cta" />`, ""), 5, `<Section gumdrop="hero-section"> names no recipe (did you mean "hero"?)`},
		{RuleValidGumdrops, false, app("", `<Section gumdrop="hero"><Gumdrop use="faq" /></Section><Section gumdrop="cta" /><Section gumdrop="team" />`, ""), app("", `<Section gumdrop="hero"><Gumdrop use="wizard" /></Section><Section gumdrop="cta" /><Section gumdrop="team" />`, ""), 5, `<Gumdrop use="wizard"> names no recipe (did you mean "multi-step-wizard"?)`},
		{RuleSectionsHaveGumdrops, false, app("", "", ""), app("", `<Section gumdrop="hero" /><Section gumdrop="faq" /><Section gumdrop="cta" /><Section variant="x" />`, ""), 5, "<Section> has no gumdrop"},
		{RuleNoEmptyScreens, false, app("", "", ""), app("", "", `<Screen name="empty"><Content /></Screen>`), 9, `<Screen name="empty"> has no sections`},
		{RuleSchemaEndpointMatch, false, app("", "", `<Schema name="Category" /><Endpoint resource="categories" />`), app("", "", `<Schema name="User" /><Endpoint resource="posts" />`), 9, `<Endpoint resource="posts"> names no declared <Schema>`},
		{RuleAdjacentGrids, true, app("", "", ""), app("", `<Section gumdrop="hero" /><Content /><Section gumdrop="pricing" />
    <Section gumdrop="gallery" />`, ""), 6, `<Section gumdrop="gallery"> follows <Section gumdrop="pricing"> (line 5)`},
		{RuleLowDiversity, true, app("", "", ""), app("", `<Section gumdrop="hero" /><Section gumdrop="hero" /><Section gumdrop="cta" />`, ""), 1, "only 2 distinct recipe(s) (cta, hero) across 3 section(s)"},
		{RuleMissingNav, true, app("", "", ""), strings.Replace(app("", "", `<Screen name="two"><Section gumdrop="faq" /></Screen>`), `<Nav><NavItem label="Home" screen="home" /></Nav>`, "", 1), 1, "the app has 2 screens and no <Nav>"},
		{RuleNoDataForStateful, true, app("", `<Section gumdrop="hero" /><Section gumdrop="kanban-board" /><Section gumdrop="cta" />`, `<Data name="cards" />`), app("", `<Section gumdrop="hero" /><Section gumdrop="kanban-board" /><Section gumdrop="cta" />`, ""), 5, "recipe kanban-board shows stateful data but the plan declares no <Data>"},
		{RuleHasSteps, false, orch(step), orch(`<Phase name="one"><Stop reason="x" /></Phase>`), 1, "<Plan> has no <Step>"},
		{RuleStepInstructions, false, orch(step), orch(`<Phase name="one">
  <Step name="s">   </Step></Phase>`), 3, `<Step name="s"> has no instructions`},
		{RuleHumanHasMessage, false, orch(step + `<Human message="ok?" />`), orch(step + "\n" + `<Human message="" />`), 3, "<Human> has no message"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, res := Check(DefaultFile, []byte(tt.pass), DefaultRegistries())
			if !res.OK() {
				t.Errorf("passing plan has failures: %v", res.Failures)
			}
			for _, f := range append(res.Failures, res.Warnings...) {
				if f.ID == tt.id {
					t.Errorf("passing plan has %s: %s", f.ID, f.Message)
				}
			}
			_, res = Check(DefaultFile, []byte(tt.fail), DefaultRegistries())
			list := res.Failures
			if tt.warn {
				list = res.Warnings
				if !res.OK() {
					t.Errorf("warning case has failures: %v", res.Failures)
				}
			}
			for _, f := range list {
				if f.ID == tt.id {
					if f.Line != tt.failLine {
						t.Errorf("finding at line %d, want %d: %s", f.Line, tt.failLine, f.Message)
					}
					if !strings.Contains(f.Message, tt.msg) {
						t.Errorf("message %q does not contain %q", f.Message, tt.msg)
					}
					return
				}
			}
			t.Errorf("failing plan has no %s finding; got failures %v warnings %v", tt.id, res.Failures, res.Warnings)
		})
	}
}

// TestFindingFormat checks the one way findings are printed everywhere:
// FILE:LINE:COL when the finding has a column, FILE:LINE when it has only
// a line, no position when it is about the whole plan.
func TestFindingFormat(t *testing.T) {
	tests := []struct {
		name, kind, file string
		f                Finding
		want             string
	}{
		{"line and column", "FAIL", "plan.tsx", Finding{ID: "parseable", Line: 12, Col: 5, Message: "unclosed <App>"}, "FAIL [parseable] plan.tsx:12:5: unclosed <App>"},
		{"line only", "WARN", "plan.tsx", Finding{ID: "requirement-unmarked", Line: 3, Message: "m"}, "WARN [requirement-unmarked] plan.tsx:3: m"},
		{"no position", "FAIL", "plan.tsx", Finding{ID: "parseable", Message: "the plan is empty"}, "FAIL [parseable]: the plan is empty"},
		{"default file", "FAIL", "", Finding{ID: "has-theme", Line: 1, Col: 1, Message: "m"}, "FAIL [has-theme] plan.tsx:1:1: m"},
		{"other file", "WARN", "warn.tsx", Finding{ID: "low-diversity", Line: 1, Col: 1, Message: "m"}, "WARN [low-diversity] warn.tsx:1:1: m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Format(tt.kind, tt.file); got != tt.want {
				t.Errorf("Format = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFindingColumns checks that findings point at the column a person
// would put the cursor on: the syntax error, the offending prop value, or
// the element's '<'.
func TestFindingColumns(t *testing.T) {
	tests := []struct {
		name, src, id string
		line, col     int
	}{
		{"syntax error", "<App name=\"a\">\n  <Screen name=\"home\">\n    </App>", RuleParseable, 3, 5},
		{"prop value", "<App name=\"a\">\n  <Theme mood=\"zen\" />\n  <Screen name=\"home\">\n    <Section gumdrop=\"hero\" cols=\"2\" />\n  </Screen>\n</App>", RulePropType, 4, 34},
		{"unknown recipe", "<App name=\"a\">\n  <Theme mood=\"zen\" />\n  <Screen name=\"home\">\n    <Section gumdrop=\"heor\" />\n  </Screen>\n</App>", RuleValidGumdrops, 4, 22},
		{"element", "<App name=\"a\">\n  <Theme mood=\"zen\" />\n  <Screen name=\"home\">\n  </Screen>\n</App>", RuleNoEmptyScreens, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res := Check(DefaultFile, []byte(tt.src), DefaultRegistries())
			for _, f := range res.Failures {
				if f.ID == tt.id {
					if f.Line != tt.line || f.Col != tt.col {
						t.Errorf("%s at %d:%d, want %d:%d (%s)", f.ID, f.Line, f.Col, tt.line, tt.col, f.Format("FAIL", ""))
					}
					return
				}
			}
			t.Fatalf("no %s finding in %v", tt.id, res.Failures)
		})
	}
}

// TestValidateEveryRule checks that the table above covers every id.
func TestValidateEveryRule(t *testing.T) {
	ids := []string{RuleParseable, RuleHasAppRoot, RuleUnknownComponent, RuleUnknownProp, RulePropType,
		RuleRequiredProp, RuleInvalidNesting, RuleHasTheme, RuleHasScreens, RuleValidMood, RuleValidFont,
		RuleValidPattern, RuleValidGumdrops, RuleSectionsHaveGumdrops, RuleNoEmptyScreens,
		RuleSchemaEndpointMatch, RuleAdjacentGrids, RuleLowDiversity, RuleMissingNav,
		RuleNoDataForStateful, RuleHasSteps, RuleStepInstructions, RuleHumanHasMessage}
	if len(ids) != 23 {
		t.Fatalf("SPEC §5 lists 23 ids, have %d", len(ids))
	}
}

func TestValidateRegistriesArePassedIn(t *testing.T) {
	src := app(`<Theme mood="moody" font="Comic Neue" />`, `<Section gumdrop="my-hero" /><Section gumdrop="faq" /><Section gumdrop="cta" />`, "")
	_, res := Check(DefaultFile, []byte(src), DefaultRegistries())
	if len(res.Failures) != 3 {
		t.Fatalf("defaults: want 3 failures, got %v", res.Failures)
	}
	reg := Registries{
		Moods:   []string{"moody"},
		Fonts:   []string{"Comic Neue"},
		Recipes: []string{"my-hero", "faq", "cta"},
	}
	if _, res := Check(DefaultFile, []byte(src), reg); !res.OK() {
		t.Fatalf("own registries: want valid, got %v", res.Failures)
	}
}

func TestValidateFindingsSorted(t *testing.T) {
	src := app(`<Theme mood="nope" />`, `<Section gumdrop="nope" /><Section /><Section gumdrop="cta" />`, "")
	_, res := Check(DefaultFile, []byte(src), DefaultRegistries())
	for i := 1; i < len(res.Failures); i++ {
		if res.Failures[i].Line < res.Failures[i-1].Line {
			t.Fatalf("failures not in line order: %v", res.Failures)
		}
	}
}

func TestSuggest(t *testing.T) {
	recipes := DefaultRegistries().Recipes
	tests := []struct {
		word string
		want string
	}{
		{"heor", "hero"},
		{"data-tabel", "data-table"},
		{"kanban", "kanban-board"},
		{"pricing-table", "pricing"},
	}
	for _, tt := range tests {
		got := Suggest(tt.word, recipes, 3)
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("Suggest(%q) = %v, want %q first", tt.word, got, tt.want)
		}
	}
	if got := Suggest("zzzzzzzz", recipes, 3); len(got) != 0 {
		t.Errorf("Suggest(zzzzzzzz) = %v, want none", got)
	}

	// The whole list, in order: nearest first, ties by name; a candidate
	// that contains the word, or is contained in it, counts as near.
	ids := []string{"cta", "faq", "hero", "multi-step-wizard", "pricing", "pricing-table", "team"}
	for _, tt := range []struct {
		word string
		want []string
	}{
		{"heros", []string{"hero"}},
		{"pricng", []string{"pricing"}},
		{"wizard", []string{"multi-step-wizard"}},
		{"pricing", []string{"pricing", "pricing-table"}},
		{"zzzzzzzz", []string{}},
		{"tea", []string{"team", "cta"}},
		{"HERO", []string{"hero"}},
	} {
		got := Suggest(tt.word, ids, 3)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

package plan

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The stable ids of validation findings (SPEC §5).
const (
	RuleParseable            = "parseable"
	RuleHasAppRoot           = "has-app-root"
	RuleUnknownComponent     = "unknown-component"
	RuleUnknownProp          = "unknown-prop"
	RulePropType             = "prop-type"
	RuleRequiredProp         = "required-prop"
	RuleInvalidNesting       = "invalid-nesting"
	RuleHasTheme             = "has-theme"
	RuleHasScreens           = "has-screens"
	RuleValidMood            = "valid-mood"
	RuleValidFont            = "valid-font"
	RuleValidPattern         = "valid-pattern"
	RuleValidGumdrops        = "valid-gumdrops"
	RuleSectionsHaveGumdrops = "sections-have-gumdrops"
	RuleNoEmptyScreens       = "no-empty-screens"
	RuleSchemaEndpointMatch  = "schema-endpoint-match"
	RuleAdjacentGrids        = "adjacent-grids"
	RuleLowDiversity         = "low-diversity"
	RuleMissingNav           = "missing-nav"
	RuleNoDataForStateful    = "no-data-for-stateful"
	RuleHasSteps             = "has-steps"
	RuleStepInstructions     = "step-has-instructions"
	RuleHumanHasMessage      = "human-has-message"
)

// GridHeavyRecipes are the recipes two of which in a row trigger the
// adjacent-grids warning.
func GridHeavyRecipes() []string {
	return []string{"blog-grid", "gallery", "grid-list", "pricing", "features", "team", "testimonials", "portfolio", "stats-dashboard"}
}

// StatefulRecipes are the recipes that want a <Data> declaration.
func StatefulRecipes() []string {
	return []string{"data-table", "kanban-board", "calendar-view", "chat-messaging", "activity-feed", "file-browser"}
}

// Finding is one validation failure or warning.
type Finding struct {
	ID      string `json:"id"`
	Message string `json:"message"`
	// Line is the line of the node the finding is about; 0 when the
	// finding is about the whole plan.
	Line int `json:"line"`
	// Col is the column the finding points at (the element's '<', a prop
	// value, or where a syntax error was found); 0 when it has none.
	Col int `json:"col,omitempty"`
}

// Where is the finding's position in file as editors and CI annotations
// read it: FILE:LINE:COL, FILE:LINE without a column, FILE without a line.
// An empty file is DefaultFile.
func (f Finding) Where(file string) string {
	if file == "" {
		file = DefaultFile
	}
	switch {
	case f.Line <= 0:
		return file
	case f.Col <= 0:
		return fmt.Sprintf("%s:%d", file, f.Line)
	}
	return fmt.Sprintf("%s:%d:%d", file, f.Line, f.Col)
}

// Format renders the finding as ralph prints it everywhere (plan
// validate, feedback.md, status): "KIND [id] FILE:LINE:COL: message", or
// "KIND [id]: message" for a finding about the whole plan. kind is FAIL
// or WARN.
func (f Finding) Format(kind, file string) string {
	if f.Line <= 0 {
		return fmt.Sprintf("%s [%s]: %s", kind, f.ID, f.Message)
	}
	return fmt.Sprintf("%s [%s] %s: %s", kind, f.ID, f.Where(file), f.Message)
}

// Result holds the failures, which block a plan, and the warnings, which
// do not. Both are in line order.
type Result struct {
	Failures []Finding `json:"failures"`
	Warnings []Finding `json:"warnings"`
}

// OK reports whether the plan has no failures.
func (r Result) OK() bool { return len(r.Failures) == 0 }

// Check parses src and validates it. A syntax error is the one failure
// "parseable", with the line and column of the error; root is then nil.
func Check(file string, src []byte, reg Registries) (*Node, Result) {
	root, err := ParseFile(file, src)
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) {
			return nil, Result{Failures: []Finding{{ID: RuleParseable, Message: err.Error()}}}
		}
		return nil, Result{Failures: []Finding{{
			ID:      RuleParseable,
			Message: se.Msg,
			Line:    se.Line,
			Col:     se.Col,
		}}}
	}
	return root, Validate(root, reg)
}

// Validate checks a parsed plan against reg (nil fields take the defaults
// of DefaultRegistries).
func Validate(root *Node, reg Registries) Result {
	reg = reg.withDefaults()
	v := &validator{reg: reg, comps: index(reg.Components)}
	if root == nil {
		v.fail(RuleParseable, pos{}, "the plan is empty: write one root element, <App …> or <Plan …>")
		return v.res
	}
	switch root.Component {
	case "App":
		v.app(root)
	case "Plan":
		v.plan(root)
	default:
		v.fail(RuleHasAppRoot, nodeAt(root), "the root element is <%s>; a plan's root must be <App name=\"…\"> (an app plan) or <Plan name=\"…\"> (an orchestration plan)", root.Component)
	}
	v.node(root, nil)
	sortFindings(v.res.Failures)
	sortFindings(v.res.Warnings)
	return v.res
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Line < fs[j].Line })
}

type validator struct {
	reg   Registries
	comps map[string]*Component
	res   Result
}

func (v *validator) fail(id string, at pos, format string, args ...any) {
	v.res.Failures = append(v.res.Failures, Finding{ID: id, Line: at.line, Col: at.col, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(id string, at pos, format string, args ...any) {
	v.res.Warnings = append(v.res.Warnings, Finding{ID: id, Line: at.line, Col: at.col, Message: fmt.Sprintf(format, args...)})
}

// nodeAt is where n starts: its '<'.
func nodeAt(n *Node) pos { return pos{n.Line, n.Col} }

// valueAt is where a prop value starts.
func valueAt(v *Value) pos { return pos{v.Line, v.Col} }

func (v *validator) componentNames() []string {
	names := make([]string, 0, len(v.comps))
	for _, c := range v.reg.Components {
		names = append(names, c.Name)
	}
	return names
}

// node checks n and its subtree against the declarations; parent is n's
// parent's declaration, nil at the root or under an unknown component.
func (v *validator) node(n *Node, parent *Component) {
	spec, known := v.comps[n.Component]
	if !known {
		v.fail(RuleUnknownComponent, nodeAt(n), "<%s> is not a plan component%s; plan components are: %s",
			n.Component, didYouMean(n.Component, v.componentNames()), strings.Join(v.componentNames(), ", "))
		for _, c := range n.Children {
			v.node(c, nil)
		}
		return
	}
	if parent != nil && !contains(parent.Children, n.Component) {
		if len(parent.Children) == 0 {
			v.fail(RuleInvalidNesting, nodeAt(n), "<%s> cannot be inside <%s>: <%s> takes no child elements", n.Component, parent.Name, parent.Name)
		} else {
			v.fail(RuleInvalidNesting, nodeAt(n), "<%s> cannot be inside <%s>: <%s> may contain %s", n.Component, parent.Name, parent.Name, strings.Join(parent.Children, ", "))
		}
	}
	v.props(n, spec)
	v.specific(n)
	for _, c := range n.Children {
		v.node(c, spec)
	}
}

// props checks n's props against spec: known names, kinds, enums,
// required props.
func (v *validator) props(n *Node, spec *Component) {
	clean := true
	for name, val := range n.Props {
		if !propOK(spec, name, *val) {
			clean = false
			break
		}
	}
	if !clean {
		v.propFindings(n, spec)
	}
	for _, decl := range spec.Props {
		if decl.Required {
			if _, ok := n.Props[decl.Name]; !ok {
				v.fail(RuleRequiredProp, nodeAt(n), "<%s> needs a %s prop: <%s %s=\"…\">", n.Component, decl.Name, n.Component, decl.Name)
			}
		}
	}
	if len(spec.OneOf) > 0 {
		set := false
		for _, name := range spec.OneOf {
			if _, ok := n.Props[name]; ok {
				set = true
			}
		}
		if !set {
			v.fail(RuleRequiredProp, nodeAt(n), "<%s> needs one of the props %s, e.g. <%s %s=\"…\" />", n.Component, strings.Join(spec.OneOf, ", "), n.Component, spec.OneOf[0])
		}
	}
}

// propOK reports whether one prop is declared and well typed.
func propOK(spec *Component, name string, val Value) bool {
	decl, ok := spec.Prop(name)
	if !ok {
		return spec.AnyProps
	}
	if len(decl.Kinds) > 0 && !slices.Contains(decl.Kinds, val.Kind) {
		return false
	}
	return len(decl.Enum) == 0 || val.Kind != String || contains(decl.Enum, val.Str) || decl.Fold && containsFolded(decl.Enum, val.Str)
}

// propFindings reports n's undeclared and ill-typed props in source order.
func (v *validator) propFindings(n *Node, spec *Component) {
	names := make([]string, 0, len(n.Props))
	for name := range n.Props {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := n.Props[names[i]], n.Props[names[j]]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		val := n.Props[name]
		decl, ok := spec.Prop(name)
		if !ok {
			if spec.AnyProps {
				continue
			}
			declared := make([]string, len(spec.Props))
			for i, p := range spec.Props {
				declared[i] = p.Name
			}
			if len(declared) == 0 {
				v.fail(RuleUnknownProp, valueAt(val), "<%s> takes no props, but has %s", n.Component, name)
				continue
			}
			v.fail(RuleUnknownProp, valueAt(val), "<%s> has no prop %s%s; its props are %s", n.Component, name, didYouMean(name, declared), strings.Join(declared, ", "))
			continue
		}
		if len(decl.Kinds) > 0 && !slices.Contains(decl.Kinds, val.Kind) {
			v.fail(RulePropType, valueAt(val), "<%s %s> must be %s, not %s %s%s", n.Component, name, kindList(decl.Kinds), article(val.Kind), val.Kind, typeHint(name, decl.Kinds, *val))
			continue
		}
		if !propOK(spec, name, *val) {
			v.fail(RulePropType, valueAt(val), "<%s %s=%q> is not one of the accepted values%s; use one of %s", n.Component, name, val.Str, didYouMean(val.Str, decl.Enum), strings.Join(decl.Enum, ", "))
		}
	}
}

func article(k Kind) string {
	if k == Array || k == Object {
		return "an"
	}
	return "a"
}

func kindList(ks []Kind) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = article(k) + " " + k.String()
	}
	return strings.Join(parts, " or ")
}

// typeHint shows how to write the value with the right type.
func typeHint(name string, want []Kind, got Value) string {
	switch {
	case slices.Contains(want, Number) && got.Kind == String:
		return fmt.Sprintf(": write %s={%s} without quotes", name, got.Str)
	case slices.Contains(want, String) && got.Kind != String:
		return fmt.Sprintf(": write %s=\"…\"", name)
	case slices.Contains(want, Bool):
		return fmt.Sprintf(": write %s or %s={false}", name, name)
	}
	return ""
}

// specific runs the checks that belong to one component.
func (v *validator) specific(n *Node) {
	switch n.Component {
	case "Theme":
		v.theme(n)
	case "Section":
		if _, ok := n.Props["gumdrop"]; !ok {
			v.fail(RuleSectionsHaveGumdrops, nodeAt(n), "<Section> has no gumdrop: name the recipe it is built from, e.g. <Section gumdrop=\"hero\" /> (ralph recipe list shows them all)")
		}
		v.recipe(n, "gumdrop")
	case "Gumdrop":
		v.recipe(n, "use")
	case "Screen":
		if !hasDescendant(n, "Section") {
			v.fail(RuleNoEmptyScreens, nodeAt(n), "<Screen name=%q> has no sections: add at least one <Section gumdrop=\"…\" />, directly or inside <Content>", n.Str("name"))
		}
	case "Step":
		if strings.TrimSpace(n.Text) == "" {
			v.fail(RuleStepInstructions, nodeAt(n), "<Step name=%q> has no instructions: write what the step must do as its text, <Step name=%q>Do this…</Step>", n.Str("name"), n.Str("name"))
		}
	case "Human":
		if strings.TrimSpace(n.Str("message")) == "" {
			v.fail(RuleHumanHasMessage, nodeAt(n), "<Human> has no message: say what the person approves, e.g. <Human message=\"Deploy to production?\" />")
		}
	}
}

func (v *validator) theme(n *Node) {
	if val, ok := n.Props["mood"]; ok && val.Kind == String {
		if !containsFolded(v.reg.Moods, val.Str) && !containsFolded(v.reg.Presets, val.Str) {
			all := append(slices.Clone(v.reg.Moods), v.reg.Presets...)
			v.fail(RuleValidMood, valueAt(val), "<Theme mood=%q> is neither a mood nor a preset%s; moods: %s; presets: %s",
				val.Str, didYouMean(val.Str, all), strings.Join(v.reg.Moods, ", "), strings.Join(v.reg.Presets, ", "))
		}
	}
	for _, prop := range []string{"font", "monoFont"} {
		if val, ok := n.Props[prop]; ok && val.Kind == String && !containsFolded(v.reg.Fonts, val.Str) {
			v.fail(RuleValidFont, valueAt(val), "<Theme %s=%q> is not a curated font%s; use one of %s",
				prop, val.Str, didYouMean(val.Str, v.reg.Fonts), strings.Join(v.reg.Fonts, ", "))
		}
	}
	if val, ok := n.Props["pattern"]; ok && val.Kind == String && !containsFolded(v.reg.Patterns, val.Str) {
		v.fail(RuleValidPattern, valueAt(val), "<Theme pattern=%q> is not a colour pattern%s; use one of %s",
			val.Str, didYouMean(val.Str, v.reg.Patterns), strings.Join(v.reg.Patterns, ", "))
	}
}

func (v *validator) recipe(n *Node, prop string) {
	val, ok := n.Props[prop]
	if !ok || val.Kind != String || contains(v.reg.Recipes, val.Str) {
		return
	}
	hint := didYouMean(val.Str, v.reg.Recipes)
	if hint == "" {
		hint = "; recipe ids are exact, see ralph recipe list"
	}
	v.fail(RuleValidGumdrops, valueAt(val), "<%s %s=%q> names no recipe%s", n.Component, prop, val.Str, hint)
}

// app runs the whole-plan checks of an app plan.
func (v *validator) app(root *Node) {
	if Theme(root) == nil {
		v.fail(RuleHasTheme, nodeAt(root), "<App> has no <Theme>: add one as a direct child, e.g. <Theme mood=\"minimal\" /> or <Theme seed={140} pattern=\"triadic\" />")
	}
	screens := childrenOf(root, "Screen")
	if len(screens) == 0 {
		v.fail(RuleHasScreens, nodeAt(root), "<App> has no <Screen>: add at least one <Screen name=\"…\"> with its sections as a direct child of <App>")
	}
	if len(Collect(root, "Screen")) > 1 && len(Collect(root, "Nav")) == 0 {
		v.warn(RuleMissingNav, nodeAt(root), "the app has %d screens and no <Nav>: add <Nav> with a <NavItem> per screen so people can move between them", len(Collect(root, "Screen")))
	}

	// Recipes used, for diversity and data checks.
	var used []*Node
	root.Walk(func(n *Node) bool {
		if recipeID(n) != "" {
			used = append(used, n)
		}
		return true
	})
	distinct := map[string]bool{}
	for _, n := range used {
		distinct[recipeID(n)] = true
	}
	if sections := Sections(root); len(sections) > 0 && len(distinct) < 3 {
		ids := make([]string, 0, len(distinct))
		for id := range distinct {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		v.warn(RuleLowDiversity, nodeAt(root), "the plan uses only %d distinct recipe(s) (%s) across %d section(s): vary the sections (e.g. hero, features, testimonials, faq, cta) so pages do not look alike", len(distinct), strings.Join(ids, ", "), len(sections))
	}
	if len(Collect(root, "Data")) == 0 {
		for _, n := range used {
			if id := recipeID(n); contains(StatefulRecipes(), id) {
				v.warn(RuleNoDataForStateful, nodeAt(n), "recipe %s shows stateful data but the plan declares no <Data>: add <Data name=\"…\" schema=\"…\" /> saying what it holds", id)
				break
			}
		}
	}
	for _, screen := range Collect(root, "Screen") {
		secs := ScreenSections(screen)
		for i := 1; i < len(secs); i++ {
			a, b := secs[i-1].Str("gumdrop"), secs[i].Str("gumdrop")
			if contains(GridHeavyRecipes(), a) && contains(GridHeavyRecipes(), b) {
				v.warn(RuleAdjacentGrids, nodeAt(secs[i]), "<Section gumdrop=%q> follows <Section gumdrop=%q> (line %d): two grid-heavy sections in a row read as one wall of cards; put a different kind of section between them", b, a, secs[i-1].Line)
			}
		}
	}
	schemas := map[string]bool{}
	var schemaNames []string
	for _, s := range Collect(root, "Schema") {
		if name := s.Str("name"); name != "" {
			schemas[singular(name)] = true
			schemaNames = append(schemaNames, name)
		}
	}
	for _, e := range Collect(root, "Endpoint") {
		res := e.Str("resource")
		if res == "" || schemas[singular(res)] {
			continue
		}
		if len(schemaNames) == 0 {
			v.fail(RuleSchemaEndpointMatch, nodeAt(e), "<Endpoint resource=%q> names no declared <Schema>: declare <Schema name=%q> with its <Field>s", res, res)
		} else {
			v.fail(RuleSchemaEndpointMatch, nodeAt(e), "<Endpoint resource=%q> names no declared <Schema>%s; declared schemas: %s", res, didYouMean(res, schemaNames), strings.Join(schemaNames, ", "))
		}
	}
}

// plan runs the whole-plan checks of an orchestration plan.
func (v *validator) plan(root *Node) {
	if !hasDescendant(root, "Step") {
		v.fail(RuleHasSteps, nodeAt(root), "<Plan> has no <Step>: add <Phase name=\"…\"><Step name=\"…\">instructions</Step></Phase>")
	}
}

// recipeID returns the recipe a node names: Section gumdrop or Gumdrop use.
func recipeID(n *Node) string {
	switch n.Component {
	case "Section":
		return n.Str("gumdrop")
	case "Gumdrop":
		return n.Str("use")
	}
	return ""
}

// singular folds a resource or schema name for comparison: lower case,
// plural endings removed (users → user, categories → category).
func singular(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasSuffix(s, "ies") && len(s) > 3:
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"), strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "shes"), strings.HasSuffix(s, "zes"):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "ss"):
		return s
	case strings.HasSuffix(s, "s") && len(s) > 1:
		return s[:len(s)-1]
	}
	return s
}

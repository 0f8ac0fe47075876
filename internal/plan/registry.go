package plan

import (
	"slices"
	"strings"
	"unicode"
)

// Component declares one plan component: its props and the components it
// may contain. New components are data: add a Component, not code.
type Component struct {
	Name string
	// Doc says in a few words what the component is for; `ralph plan show`
	// and messages use it.
	Doc   string
	Props []Prop
	// AnyProps accepts props not listed in Props (for open-ended style
	// components such as Typography).
	AnyProps bool
	// OneOf lists props of which at least one must be set.
	OneOf []string
	// Children lists the components that may appear as children.
	Children []string
}

// Prop declares one prop of a component.
type Prop struct {
	Name string
	// Kinds are the accepted value kinds; empty accepts any.
	Kinds []Kind
	// Enum, when set, lists the accepted values of a string prop.
	Enum []string
	// Fold compares Enum values ignoring case, '-', '_' and spaces, as the
	// theme engine looks up its names.
	Fold     bool
	Required bool
}

// Prop returns the declaration of prop name.
func (c *Component) Prop(name string) (Prop, bool) {
	for _, p := range c.Props {
		if p.Name == name {
			return p, true
		}
	}
	return Prop{}, false
}

// Registries is what validation checks a plan against. The enumerations
// belong to other packages (theme engine, recipe library), which pass their
// own lists so that validation accepts exactly what they accept. Theme
// names (moods, presets, patterns, fonts, shadow profiles, radius stops)
// match ignoring case, '-', '_' and spaces, as the theme engine looks them
// up; recipe ids match exactly. A nil
// field means the default of SPEC §6 (DefaultRegistries); an empty non-nil
// list accepts nothing.
type Registries struct {
	// Components declares every component; nil means DefaultComponents
	// built from the enumerations below.
	Components     []Component
	Moods          []string
	Presets        []string
	Patterns       []string
	Fonts          []string
	ShadowProfiles []string
	RadiusStops    []string
	// Recipes are the recipe (gumdrop) ids a Section or Gumdrop may name.
	Recipes []string
}

// DefaultRegistries returns the enumerations of SPEC §6 and the default
// components.
func DefaultRegistries() Registries {
	r := Registries{
		Moods: []string{
			"minimal", "premium", "playful", "industrial", "organic", "editorial",
			"fashion-editorial", "brutalist", "zen", "corporate", "retro", "luxury",
		},
		Presets: []string{
			"northern-lights", "cyberpunk", "doom-64", "retro-arcade", "soft-pop", "tangerine",
			"mono", "elegant-luxury", "bubblegum", "mocha-mousse", "caffeine", "catppuccin",
		},
		Patterns: []string{
			"monochromatic", "analogous", "complementary", "splitComplementary", "triadic",
			"tetradic", "goldenRatio", "flowerOfLife", "fibonacci", "vesicaPiscis", "seedOfLife",
		},
		Fonts: []string{
			"Inter", "Geist", "DM Sans", "Space Grotesk", "Plus Jakarta Sans", "Manrope",
			"Outfit", "Nunito", "Poppins", "Montserrat", "IBM Plex Sans", "Orbitron",
			"Playfair Display", "Lora", "Merriweather", "Source Serif 4", "Cormorant Garamond",
			"Fraunces", "JetBrains Mono", "IBM Plex Mono", "Geist Mono", "Fira Code",
			"Space Mono", "VT323",
		},
		ShadowProfiles: []string{"none", "subtle", "moderate", "dramatic", "harsh"},
		RadiusStops:    []string{"none", "subtle", "moderate", "rounded", "pill"},
		Recipes: []string{
			"activity-feed", "ai-prompt", "api-auth", "api-crud", "api-realtime", "api-search",
			"api-upload", "api-webhook", "article-layout", "auth-login", "blog-grid",
			"calendar-view", "changelog", "chat-messaging", "color-picker", "command-palette",
			"contact", "cta", "data-table", "dialog-modal", "documentation", "drag-drop",
			"empty-state", "faq", "features", "file-browser", "file-upload", "footer",
			"form-layout", "gallery", "grid-list", "hero", "kanban-board", "keyboard-shortcuts",
			"motion-patterns", "multi-step-wizard", "newsletter", "notification-feed",
			"onboarding", "portfolio", "pricing", "profile-page", "rich-text-editor",
			"scroll-animation", "search-results", "settings-panel", "sidebar-nav",
			"social-proof", "stats-dashboard", "team", "testimonials", "timeline",
		},
	}
	r.Components = DefaultComponents(r)
	return r
}

// withDefaults fills nil fields from DefaultRegistries.
func (r Registries) withDefaults() Registries {
	d := DefaultRegistries()
	fill := func(dst *[]string, def []string) {
		if *dst == nil {
			*dst = def
		}
	}
	fill(&r.Moods, d.Moods)
	fill(&r.Presets, d.Presets)
	fill(&r.Patterns, d.Patterns)
	fill(&r.Fonts, d.Fonts)
	fill(&r.ShadowProfiles, d.ShadowProfiles)
	fill(&r.RadiusStops, d.RadiusStops)
	fill(&r.Recipes, d.Recipes)
	if r.Components == nil {
		r.Components = DefaultComponents(r)
	}
	return r
}

// Layouts are the values of Screen layout.
func Layouts() []string {
	return []string{"scroll", "full-bleed", "centered", "sidebar", "split", "dashboard", "tabs", "stack", "grid"}
}

// HTTPMethods are the values of Endpoint method.
func HTTPMethods() []string {
	return []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
}

// DefaultComponents declares the components of SPEC §5 for app plans and
// orchestration plans. Enum props that other packages own (shadowProfile,
// radius) take their values from reg.
func DefaultComponents(reg Registries) []Component {
	str := []Kind{String}
	num := []Kind{Number}
	flag := []Kind{Bool}
	strOrNum := []Kind{String, Number}
	p := func(name string, kinds []Kind) Prop { return Prop{Name: name, Kinds: kinds} }
	req := func(name string, kinds []Kind) Prop { return Prop{Name: name, Kinds: kinds, Required: true} }
	enum := func(name string, values []string) Prop { return Prop{Name: name, Kinds: str, Enum: values} }
	themeEnum := func(name string, values []string) Prop { return Prop{Name: name, Kinds: str, Enum: values, Fold: true} }
	sectionBody := []string{"Gumdrop", "Column", "Field", "Action", "Slot", "Custom", "Data"}
	return []Component{
		// App plans.
		{Name: "App", Doc: "the root of an app plan", Props: []Prop{req("name", str), p("description", str)},
			Children: []string{"Theme", "Screen", "Nav", "Data", "Schema", "Endpoint", "Rule"}},
		{Name: "Theme", Doc: "the theme the harness applies at PLAN → BUILD",
			Props: []Prop{
				p("mood", str), p("seed", num), p("pattern", str), p("chroma", strOrNum),
				p("font", str), p("monoFont", str),
				themeEnum("shadowProfile", reg.ShadowProfiles), themeEnum("radius", reg.RadiusStops),
				p("philosophy", str),
			},
			Children: []string{"Typography", "Animation", "Rule"}},
		{Name: "Typography", Doc: "type scale notes, one prop per role", AnyProps: true},
		{Name: "Animation", Doc: "motion notes, one prop per role", AnyProps: true},
		{Name: "Rule", Doc: "a design rule", Props: []Prop{p("no", str), p("always", str), p("prefer", str)},
			OneOf: []string{"no", "always", "prefer"}},
		{Name: "Screen", Doc: "one screen (page) of the app",
			Props:    []Prop{req("name", str), enum("layout", Layouts()), p("path", str), p("description", str)},
			Children: []string{"Nav", "Content", "Section", "Data"}},
		{Name: "Nav", Doc: "the app's navigation",
			Props:    []Prop{p("type", str), p("variant", str), p("position", str)},
			Children: []string{"NavItem"}},
		{Name: "NavItem", Doc: "one navigation entry",
			Props:    []Prop{req("label", str), p("screen", str), p("to", str), p("href", str), p("icon", str)},
			Children: []string{"NavItem"}},
		{Name: "Content", Doc: "the sections of a screen, in order", Children: []string{"Section"}},
		{Name: "Section", Doc: "one section, built from a recipe (gumdrop)",
			Props: []Prop{
				p("gumdrop", str), p("variant", str), p("cols", num), p("source", str), p("file", str),
				p("title", str), p("description", str), p("id", str),
			},
			Children: sectionBody},
		{Name: "Gumdrop", Doc: "a recipe used inside a section or slot",
			Props: []Prop{req("use", str), p("variant", str)}},
		{Name: "Column", Doc: "a column of a table or grid",
			Props: []Prop{p("field", str), p("name", str), p("label", str), p("type", str),
				p("sortable", flag), p("width", strOrNum), p("span", num)},
			Children: sectionBody},
		{Name: "Field", Doc: "a form field or schema field",
			Props: []Prop{req("name", str), p("type", str), p("label", str), p("placeholder", str),
				p("required", flag), p("unique", flag), p("options", []Kind{Array}),
				p("default", []Kind{String, Number, Bool}), p("min", num), p("max", num), p("ref", str)}},
		{Name: "Action", Doc: "a button or link and what it does",
			Props: []Prop{req("label", str), p("to", str), p("href", str), p("variant", str),
				p("intent", str), p("endpoint", str), p("icon", str)}},
		{Name: "Slot", Doc: "a named region of a section",
			Props:    []Prop{req("name", str)},
			Children: []string{"Gumdrop", "Custom", "Field", "Action", "Column"}},
		{Name: "Custom", Doc: "a bespoke component no recipe covers",
			Props:    []Prop{req("name", str), p("description", str), p("file", str)},
			Children: []string{"Field", "Action", "Slot"}},
		{Name: "Data", Doc: "data a screen or section works with",
			Props: []Prop{p("name", str), p("schema", str), p("source", str), p("resource", str),
				p("count", num), p("mock", flag), p("seed", []Kind{Array, Object})}},
		{Name: "Schema", Doc: "a data model",
			Props:    []Prop{req("name", str), p("description", str)},
			Children: []string{"Field"}},
		{Name: "Endpoint", Doc: "an API endpoint over a schema",
			Props: []Prop{req("resource", str), Prop{Name: "method", Kinds: str, Enum: HTTPMethods()},
				p("path", str), p("auth", flag), p("description", str)}},

		// Orchestration plans.
		{Name: "Plan", Doc: "the root of an orchestration plan",
			Props:    []Prop{req("name", str), p("description", str)},
			Children: []string{"Phase", "Step", "Human", "Stop", "Persona", "Constraints"}},
		{Name: "Phase", Doc: "a group of steps run in order",
			Props:    []Prop{req("name", str)},
			Children: []string{"Step", "Human", "Stop"}},
		{Name: "Step", Doc: "one build loop; its text is the task",
			Props:    []Prop{req("name", str)},
			Children: []string{"Persona", "Constraints"}},
		{Name: "Human", Doc: "wait for a person to approve",
			Props: []Prop{p("message", str), p("timeout", strOrNum),
				Prop{Name: "onReject", Kinds: str, Enum: []string{"stop", "skip"}},
				Prop{Name: "type", Kinds: str, Enum: []string{"confirmation", "text", "select"}},
				p("options", []Kind{Array})}},
		{Name: "Stop", Doc: "stop the run here", Props: []Prop{p("reason", str)}},
		{Name: "Persona", Doc: "who the agent is, merged into its system prompt", Props: []Prop{p("text", str)}},
		{Name: "Constraints", Doc: "rules for the agent, one per line", Props: []Prop{p("text", str)}},
	}
}

// index maps component names to declarations.
func index(comps []Component) map[string]*Component {
	m := make(map[string]*Component, len(comps))
	for i := range comps {
		m[comps[i].Name] = &comps[i]
	}
	return m
}

// contains reports whether list holds s.
func contains(list []string, s string) bool { return slices.Contains(list, s) }

// containsFolded reports whether list holds s, ignoring case, '-', '_'
// and spaces: the theme engine's way of matching names ("jetbrains-mono"
// is "JetBrains Mono").
func containsFolded(list []string, s string) bool {
	f := foldName(s)
	for _, l := range list {
		if foldName(l) == f {
			return true
		}
	}
	return false
}

func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == ' ' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

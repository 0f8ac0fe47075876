// Package plancontext resolves a validated plan into what the agent needs
// to build it (SPEC §6, seed 000): the harness applies the plan's <Theme>
// with the theme engine and loads the recipe of every <Section> by its
// exact id, so the agent enters the BUILD phase with the theme already set
// and every recipe in front of it, and has nothing left to discover.
//
// Resolve does the work and reports it as a Context; Format renders a
// Context as the body of the build instructions in feedback.md. Nothing
// here blocks the PLAN → BUILD transition: a theme that cannot be applied
// or a recipe that cannot be found is reported in the Context, never
// returned as an error. Nothing here runs a program either: the theme is
// applied in process, and the command line in the Context is only the
// equivalent a person would type.
package plancontext

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/theme"
)

// ThemeMode says how a <Theme> was turned into a theme request.
type ThemeMode string

// Theme modes.
const (
	// ModeGenerate builds a theme from seed, pattern, mood, chroma, font,
	// shadowProfile and radius, the ones the plan leaves out filled in
	// from the mood (ThemeResult.Defaults).
	ModeGenerate ThemeMode = "generate"
	// ModePreset applies the preset named by the mood prop.
	ModePreset ThemeMode = "preset"
	// ModeNone means the plan has no <Theme>.
	ModeNone ThemeMode = "none"
)

// Options configures Resolve.
type Options struct {
	// Dir is the workspace root. The theme is applied there.
	Dir string
	// Stylesheet is where the theme goes, relative to Dir unless absolute;
	// "" means theme.DefaultStylesheet (src/index.css).
	Stylesheet string
	// Recipes is the recipe library; nil loads the one seen from Dir
	// (recipe.Load).
	Recipes *recipe.Library
	// Logger receives what was resolved; nil discards.
	Logger *slog.Logger
}

// Context is a resolved plan: the theme as applied and each section with
// its recipe.
type Context struct {
	Theme    ThemeResult
	Sections []SectionContext
	// Steps are the entries of an orchestration plan, in the order the
	// engine runs them; empty for app plans.
	Steps []StepContext
	// Warnings are things the agent should know that did not stop the
	// resolution, each one sentence: a prop the theme engine ignores,
	// a variant the recipe does not describe.
	Warnings []string
}

// ThemeResult is what happened to the plan's <Theme>.
type ThemeResult struct {
	Mode ThemeMode
	// Applied reports whether the theme was written to the stylesheet.
	Applied bool
	// Stylesheet is where the theme was (or would have been) written.
	Stylesheet string
	// Command is the equivalent command line, for example
	// "ralph theme preset cyberpunk --apply"; "" in ModeNone.
	Command string
	// Argv is Command as arguments, without the leading "ralph": what a
	// program runs to reproduce the theme. Nil in ModeNone.
	Argv []string
	// Defaults are the theme settings the plan left out and the harness
	// chose, each a short phrase such as "pattern analogous (the organic
	// mood's default)"; empty when the plan gave them all.
	Defaults []string
	// Output is what the command prints; "" unless Applied.
	Output string
	// Error says why the theme was not applied; "" when it was, or when
	// the plan has no <Theme> and needs none.
	Error string
}

// SectionContext is one <Section> of the plan with its recipe.
type SectionContext struct {
	// Gumdrop is the recipe id the section names.
	Gumdrop string
	Variant string
	// File is the section's source file: its file prop, else the
	// suggested file for its recipe id (src/sections/<Pascal>Section.tsx).
	File string
	// Components are the shadcn/ui components the recipe uses.
	Components []string
	// Recipe is the recipe's markdown body, front matter stripped; "" when
	// no recipe has the id.
	Recipe string
	// Found reports whether a recipe has exactly the id Gumdrop.
	Found bool
}

// StepContext is one <Step>, <Human> or <Stop> of an orchestration plan.
type StepContext struct {
	// Kind is the element: "Step", "Human" or "Stop".
	Kind string
	// Phase is the name of the enclosing <Phase>, "" at the top level.
	Phase string
	// Name is the step's name, the Human's message or the Stop's reason.
	Name string
	// Summary is the first line of a step's instructions.
	Summary string
}

// Resolve applies the plan's theme and loads its recipes. It never fails:
// every problem is reported in the returned Context.
func Resolve(ctx context.Context, root *plan.Node, opts Options) Context {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	log = log.With("component", "plancontext")
	var c Context
	if root == nil {
		c.Theme = ThemeResult{Mode: ModeNone}
		return c
	}
	c.Theme = resolveTheme(root, opts, &c.Warnings)
	if c.Theme.Applied {
		log.Info("theme applied", "command", c.Theme.Command, "stylesheet", c.Theme.Stylesheet)
	} else if c.Theme.Error != "" {
		log.Warn("theme not applied", "mode", string(c.Theme.Mode), "command", c.Theme.Command, "err", c.Theme.Error)
	}

	if secs := plan.Sections(root); len(secs) > 0 {
		lib := opts.Recipes
		if lib == nil {
			var err error
			if lib, err = recipe.Load(ctx, opts.Dir); err != nil {
				log.Warn("load recipes; using the embedded library", "err", err)
				c.Warnings = append(c.Warnings, fmt.Sprintf("The project's recipes could not be read (%v); the built-in recipes were used.", err))
				lib, _ = recipe.Embedded()
			}
		}
		c.Sections = resolveSections(secs, lib, &c.Warnings)
		found := 0
		for _, s := range c.Sections {
			if s.Found {
				found++
			}
		}
		log.Info("recipes resolved", "sections", len(c.Sections), "found", found)
	}
	c.Steps = resolveSteps(root)
	return c
}

// themeRequest turns <Theme> props into a theme request. It accepts
// every combination validation accepts:
//
//   - a preset name as mood, without both seed and pattern: that preset;
//   - anything else: a generated theme from the seed, pattern and mood
//     given (a preset's mood when mood names a preset), with what is left
//     out taken from the mood (theme.MoodOptions): its default pattern,
//     and a seed hue derived from the plan (themeKey), so that the same
//     plan always gets the same theme. No mood at all is
//     theme.DefaultMood.
//
// The settings it chose are returned as defaults, one phrase each. A name
// validation would have rejected is passed on for the theme engine to
// reject.
func themeRequest(root, n *plan.Node, warnings *[]string) (req theme.Request, mode ThemeMode, defaults []string) {
	seed, hasSeed := n.Num("seed")
	pattern := n.Str("pattern")
	mood := n.Str("mood")
	preset, isPreset := lookupPreset(mood)
	if mood != "" && isPreset && !(hasSeed && pattern != "") {
		var ignored []string
		for _, prop := range []string{"seed", "pattern", "chroma", "font", "shadowProfile", "radius"} {
			if _, set := n.Prop(prop); set {
				ignored = append(ignored, prop)
			}
		}
		if len(ignored) > 0 {
			*warnings = append(*warnings, fmt.Sprintf("Theme %s %s ignored: preset %q sets its own. To choose them, give <Theme> both a seed and a pattern instead.", strings.Join(ignored, ", "), isAre(len(ignored)), preset.Name))
		}
		return theme.Request{Preset: preset.Name}, ModePreset, nil
	}

	o := theme.GenerateOptions{
		Mood:          mood,
		Font:          n.Str("font"),
		ShadowProfile: n.Str("shadowProfile"),
		Radius:        n.Str("radius"),
	}
	if mood != "" && isPreset {
		if _, err := theme.LookupMood(mood); err != nil {
			// Validation accepts a preset name as mood; a generated
			// theme takes that preset's mood.
			o.Mood = preset.Options.Mood
			*warnings = append(*warnings, fmt.Sprintf("Theme mood %q is a preset, not a mood; the theme was generated from your seed and pattern with the preset's mood %q.", mood, preset.Options.Mood))
		}
	}
	if hasSeed && pattern != "" {
		o.Seed, o.Pattern = seed, pattern
	} else {
		// What the plan leaves out comes from the mood. An unknown mood
		// (validation rejects it) keeps its name, for the engine to
		// report, and borrows the default mood's pattern and hues.
		d, err := theme.MoodOptions(o.Mood, themeKey(root, n))
		if err != nil {
			d, _ = theme.MoodOptions(theme.DefaultMood, themeKey(root, n))
			d.Mood = o.Mood
		}
		if o.Mood == "" {
			o.Mood = d.Mood
			defaults = append(defaults, fmt.Sprintf("mood %s (the default)", d.Mood))
		}
		if hasSeed {
			o.Seed = seed
		} else {
			o.Seed = d.Seed
			defaults = append(defaults, fmt.Sprintf("seed %s° (derived from the plan, so the same plan always gets this theme)", strconv.FormatFloat(d.Seed, 'f', -1, 64)))
		}
		if pattern != "" {
			o.Pattern = pattern
		} else {
			o.Pattern = d.Pattern
			defaults = append(defaults, fmt.Sprintf("pattern %s (the %s mood's default)", d.Pattern, d.Mood))
		}
	}
	if v, ok := n.Prop("chroma"); ok {
		if ch, ok := chromaValue(v, warnings); ok {
			o.Chroma = &ch
		}
	}
	return theme.Request{Generate: o}, ModeGenerate, defaults
}

// chromaValue reads the chroma prop, a number or a numeric string, and
// clamps it to the range the theme engine accepts. A value that is not a
// number is left out, with a warning, so the mood's chroma applies.
func chromaValue(v plan.Value, warnings *[]string) (float64, bool) {
	var ch float64
	switch v.Kind {
	case plan.Number:
		ch = v.Num
	case plan.String:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		if err != nil || math.IsNaN(f) {
			*warnings = append(*warnings, fmt.Sprintf("Theme chroma %q is not a number; the mood's chroma was used.", v.Str))
			return 0, false
		}
		ch = f
	default:
		return 0, false
	}
	if c := min(max(ch, 0), theme.MaxChroma); c != ch {
		*warnings = append(*warnings, fmt.Sprintf("Theme chroma %v is outside 0 to %v; %v was used.", ch, theme.MaxChroma, c))
		ch = c
	}
	return ch, true
}

// themeKey is what a derived seed hue is made from: the plan's root
// element and name and every prop of its <Theme>, by name and value, not
// by position, so that moving or reformatting the <Theme> keeps the theme
// and changing what it says (or the app's name) picks another.
func themeKey(root, n *plan.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", root.Component, root.Str("name"))
	props := make([]string, 0, len(n.Props))
	for name := range n.Props {
		props = append(props, name)
	}
	sort.Strings(props)
	for _, name := range props {
		v, _ := n.Prop(name)
		fmt.Fprintf(&b, " %s=", name)
		writeValue(&b, v)
	}
	return b.String()
}

// writeValue writes v without its position.
func writeValue(b *strings.Builder, v plan.Value) {
	switch v.Kind {
	case plan.String:
		b.WriteString(strconv.Quote(v.Str))
	case plan.Number:
		b.WriteString(strconv.FormatFloat(v.Num, 'g', -1, 64))
	case plan.Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case plan.Array:
		b.WriteString("[")
		for i, e := range v.List {
			if i > 0 {
				b.WriteString(",")
			}
			writeValue(b, e)
		}
		b.WriteString("]")
	case plan.Object:
		b.WriteString("{")
		for i, f := range v.Fields {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Quote(f.Key) + ":")
			writeValue(b, f.Value)
		}
		b.WriteString("}")
	}
}

func resolveTheme(root *plan.Node, opts Options, warnings *[]string) ThemeResult {
	stylesheet := opts.Stylesheet
	if stylesheet == "" {
		stylesheet = theme.DefaultStylesheet
	}
	n := plan.Theme(root)
	if n == nil {
		r := ThemeResult{Mode: ModeNone, Stylesheet: stylesheet}
		if root.Component == "App" {
			r.Error = "the plan has no <Theme>"
		}
		return r
	}
	req, mode, defaults := themeRequest(root, n, warnings)
	r := ThemeResult{Mode: mode, Stylesheet: stylesheet, Defaults: defaults}
	if _, ok := n.Prop("monoFont"); ok {
		*warnings = append(*warnings, fmt.Sprintf("Theme monoFont %q is not applied by the theme engine; the mood's monospace font was used.", n.Str("monoFont")))
	}
	r.Argv = req.Argv(true)
	r.Command = "ralph " + theme.CommandLine(r.Argv)
	if opts.Dir == "" {
		r.Error = "no workspace directory to apply the theme in"
		return r
	}
	a, err := theme.ApplyRequest(opts.Dir, stylesheet, req)
	if err != nil {
		r.Error = themeError(err)
		return r
	}
	r.Applied = true
	r.Argv = a.Theme.Request.Argv(true)
	r.Command = a.Command
	r.Output = a.Output
	r.Stylesheet = a.Stylesheet
	return r
}

// themeError words a theme engine error for the agent, with the names it
// may use instead of an unknown one.
func themeError(err error) string {
	var un *theme.UnknownNameError
	if errors.As(err, &un) {
		return fmt.Sprintf("unknown %s %q; use one of: %s", un.Kind, un.Name, strings.Join(un.Valid, ", "))
	}
	return err.Error()
}

// lookupPreset finds a preset by name the way the theme engine does,
// ignoring case, '-', '_' and spaces.
func lookupPreset(name string) (theme.PresetInfo, bool) {
	f := fold(name)
	for _, p := range theme.Presets() {
		if fold(p.Name) == f {
			return p, true
		}
	}
	return theme.PresetInfo{}, false
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

func resolveSections(secs []*plan.Node, lib *recipe.Library, warnings *[]string) []SectionContext {
	out := make([]SectionContext, 0, len(secs))
	for _, n := range secs {
		s := SectionContext{
			Gumdrop: n.Str("gumdrop"),
			Variant: n.Str("variant"),
			File:    plan.SectionFile(n),
		}
		if lib != nil && s.Gumdrop != "" {
			if r, ok := lib.Get(s.Gumdrop); ok {
				s.Found = true
				s.Components = append([]string(nil), r.Components...)
				s.Recipe = strings.TrimSpace(r.Body)
				if s.Variant != "" && len(r.Variants) > 0 && !containsFold(r.Variants, s.Variant) {
					*warnings = append(*warnings, fmt.Sprintf("Section %s asks for variant %q, which its recipe does not describe (it has: %s).", s.Gumdrop, s.Variant, strings.Join(r.Variants, ", ")))
				}
			}
		}
		out = append(out, s)
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if fold(l) == fold(s) {
			return true
		}
	}
	return false
}

func resolveSteps(root *plan.Node) []StepContext {
	var out []StepContext
	for _, ref := range plan.Steps(root) {
		s := StepContext{Kind: ref.Node.Component}
		if ref.Phase != nil {
			s.Phase = ref.Phase.Str("name")
		}
		switch s.Kind {
		case "Step":
			s.Name = ref.Node.Str("name")
			s.Summary = firstLine(ref.Node.Text)
		case "Human":
			s.Name = ref.Node.Str("message")
		case "Stop":
			s.Name = ref.Node.Str("reason")
		}
		out = append(out, s)
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}

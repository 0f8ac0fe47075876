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
	// ModeGenerate builds a theme from seed, pattern and the optional mood,
	// chroma, font, shadowProfile and radius props.
	ModeGenerate ThemeMode = "generate"
	// ModePreset applies the preset named by the mood prop.
	ModePreset ThemeMode = "preset"
	// ModeNone means no theme request could be made from the plan.
	ModeNone ThemeMode = "none"
)

// ErrThemeProps is reported (in ThemeResult.Error) when a <Theme> gives
// neither seed and pattern nor a preset name as its mood.
var ErrThemeProps = errors.New("theme needs seed + pattern, or a preset name as mood")

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

// themeRequest turns <Theme> props into a theme request: seed and pattern
// make a generated theme, else a preset name as mood makes a preset, else
// it is ErrThemeProps.
func themeRequest(n *plan.Node, warnings *[]string) (theme.Request, ThemeMode, error) {
	seed, hasSeed := n.Num("seed")
	pattern := n.Str("pattern")
	mood := n.Str("mood")
	if hasSeed && pattern != "" {
		o := theme.GenerateOptions{
			Seed:          seed,
			Pattern:       pattern,
			Mood:          mood,
			Font:          n.Str("font"),
			ShadowProfile: n.Str("shadowProfile"),
			Radius:        n.Str("radius"),
		}
		if mood != "" {
			if _, err := theme.LookupMood(mood); err != nil {
				if p, ok := lookupPreset(mood); ok {
					// Validation accepts a preset name as mood; a
					// generated theme takes that preset's mood.
					o.Mood = p.Options.Mood
					*warnings = append(*warnings, fmt.Sprintf("Theme mood %q is a preset, not a mood; the theme was generated from your seed and pattern with the preset's mood %q.", mood, p.Options.Mood))
				}
			}
		}
		if v, ok := n.Prop("chroma"); ok {
			switch {
			case v.Kind == plan.Number:
				ch := v.Num
				o.Chroma = &ch
			case v.Kind == plan.String:
				if ch, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64); err == nil {
					o.Chroma = &ch
				} else {
					*warnings = append(*warnings, fmt.Sprintf("Theme chroma %q is not a number; the mood's chroma was used.", v.Str))
				}
			}
		}
		return theme.Request{Generate: o}, ModeGenerate, nil
	}
	if mood != "" {
		if p, ok := lookupPreset(mood); ok {
			var ignored []string
			for _, prop := range []string{"chroma", "font", "shadowProfile", "radius"} {
				if _, set := n.Prop(prop); set {
					ignored = append(ignored, prop)
				}
			}
			if len(ignored) > 0 {
				*warnings = append(*warnings, fmt.Sprintf("Theme %s %s ignored: preset %q sets its own. To choose them, give <Theme> a seed and a pattern instead.", strings.Join(ignored, ", "), isAre(len(ignored)), p.Name))
			}
			return theme.Request{Preset: p.Name}, ModePreset, nil
		}
	}
	var why string
	switch {
	case hasSeed:
		why = "it has a seed but no pattern"
	case pattern != "":
		why = "it has a pattern but no seed"
	case mood != "":
		why = fmt.Sprintf("%q is a mood, not a preset", mood)
	default:
		why = "it has none of these props"
	}
	return theme.Request{}, ModeNone, fmt.Errorf("%w (%s)", ErrThemeProps, why)
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
	req, mode, err := themeRequest(n, warnings)
	r := ThemeResult{Mode: mode, Stylesheet: stylesheet}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if _, ok := n.Prop("monoFont"); ok {
		*warnings = append(*warnings, fmt.Sprintf("Theme monoFont %q is not applied by the theme engine; the mood's monospace font was used.", n.Str("monoFont")))
	}
	r.Command = "ralph " + theme.CommandLine(req.Argv(true))
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

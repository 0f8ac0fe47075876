package plancontext

import (
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/theme"
)

// Registries returns the enumerations plan validation checks against,
// taken from the theme engine and from lib, so that a plan validates
// exactly when the harness can resolve it: moods, presets, patterns,
// curated fonts, shadow profiles and radius stops by the names the theme
// engine looks up, and recipe ids as lib holds them. A nil lib leaves the
// recipe ids at plan's defaults (the embedded library's ids).
func Registries(lib *recipe.Library) plan.Registries {
	r := plan.Registries{
		Moods:          names(theme.Moods(), func(m theme.Mood) string { return m.Name }),
		Presets:        names(theme.Presets(), func(p theme.PresetInfo) string { return p.Name }),
		Patterns:       names(theme.Patterns(), func(p theme.Pattern) string { return p.Name }),
		Fonts:          names(theme.CuratedFonts(), func(f theme.Font) string { return f.Name }),
		ShadowProfiles: names(theme.ShadowProfiles(), func(s theme.ShadowProfile) string { return s.Name }),
		RadiusStops:    names(theme.RadiusStops(), func(s theme.RadiusStop) string { return s.Name }),
	}
	if lib != nil {
		r.Recipes = lib.IDs()
	} else {
		r.Recipes = plan.DefaultRegistries().Recipes
	}
	r.Components = plan.DefaultComponents(r)
	return r
}

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

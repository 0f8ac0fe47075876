package theme

import (
	"fmt"
	"io"
	"strings"
)

// WriteCatalog writes what themes are made of, as ralph theme list shows
// it: the presets, moods, patterns, fonts, shadow profiles and radius
// stops.
func WriteCatalog(w io.Writer) error {
	section := func(title string) { fmt.Fprintf(w, "%s:\n", title) }
	row := func(name, desc string) { fmt.Fprintf(w, "  %-20s %s\n", name, desc) }
	section("Presets")
	for _, p := range Presets() {
		row(p.Name, p.Description)
	}
	section("\nMoods")
	for _, m := range Moods() {
		row(m.Name, m.Description)
	}
	section("\nPatterns")
	for _, p := range Patterns() {
		row(p.Name, p.Description)
	}
	section("\nFonts")
	for _, cat := range []string{Sans, Serif, Mono} {
		var names []string
		for _, f := range CuratedFonts() {
			if f.Category == cat {
				names = append(names, f.Name)
			}
		}
		row(cat, strings.Join(names, ", "))
	}
	section("\nShadow profiles")
	for _, s := range ShadowProfiles() {
		row(s.Name, s.Description)
	}
	section("\nRadius stops")
	for _, r := range RadiusStops() {
		row(r.Name, r.Value)
	}
	return nil
}

package theme

import (
	"fmt"
	"strings"
)

// Font categories.
const (
	Sans  = "sans"
	Serif = "serif"
	Mono  = "mono"
)

// Font is a curated typeface: its family name and whether it is a sans,
// serif or monospace face.
type Font struct {
	Name     string
	Category string
}

// Fonts holds the three font slots of a theme: family names, without
// fallbacks.
type Fonts struct {
	Sans, Serif, Mono string
}

// CuratedFonts returns the fonts a theme may name, sans first, then serif,
// then mono.
func CuratedFonts() []Font {
	return []Font{
		{"Inter", Sans}, {"Geist", Sans}, {"DM Sans", Sans}, {"Space Grotesk", Sans},
		{"Plus Jakarta Sans", Sans}, {"Manrope", Sans}, {"Outfit", Sans}, {"Nunito", Sans},
		{"Poppins", Sans}, {"Montserrat", Sans}, {"IBM Plex Sans", Sans}, {"Orbitron", Sans},
		{"Playfair Display", Serif}, {"Lora", Serif}, {"Merriweather", Serif},
		{"Source Serif 4", Serif}, {"Cormorant Garamond", Serif}, {"Fraunces", Serif},
		{"JetBrains Mono", Mono}, {"IBM Plex Mono", Mono}, {"Geist Mono", Mono},
		{"Fira Code", Mono}, {"Space Mono", Mono}, {"VT323", Mono},
	}
}

// LookupFont finds a curated font by name, ignoring case, spaces and
// hyphens ("jetbrains-mono" finds "JetBrains Mono").
func LookupFont(name string) (Font, error) {
	for _, f := range CuratedFonts() {
		if sameName(f.Name, name) {
			return f, nil
		}
	}
	return Font{}, unknown("font", name, names(CuratedFonts(), func(f Font) string { return f.Name }))
}

// categoryOf returns the category of a curated family, or "" for one that
// is not curated.
func categoryOf(family string) string {
	for _, f := range CuratedFonts() {
		if f.Name == family {
			return f.Category
		}
	}
	return ""
}

// fallbacks are the generic stacks that follow a family name.
func fallbacks(category string) string {
	switch category {
	case Serif:
		return `ui-serif, Georgia, Cambria, "Times New Roman", serif`
	case Mono:
		return `ui-monospace, SFMono-Regular, Menlo, Consolas, monospace`
	default:
		return `ui-sans-serif, system-ui, -apple-system, "Segoe UI", sans-serif`
	}
}

// fontStack renders a font-family value: the family as a CSS string,
// then the generic fallbacks of the family's category (or of slot, for a
// family that is not curated).
func fontStack(family, slot string) string {
	cat := categoryOf(family)
	if cat == "" {
		cat = slot
	}
	if family == "" {
		return fallbacks(cat)
	}
	return cssString(family) + ", " + fallbacks(cat)
}

// cssString quotes s as a CSS string. Quotes and backslashes are escaped,
// control characters become hex escapes, and '/' is escaped too so a value
// can never spell a comment or a ralph marker. The result is always a
// single CSS string token, whatever s holds.
func cssString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '/':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\%x ", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

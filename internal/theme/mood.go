package theme

import (
	"hash/fnv"
	"math"
)

// Curve is a mood's lightness curve for one mode: the OKLCH lightness of
// each kind of surface and text. The engine derives every token's
// lightness from these six values.
type Curve struct {
	Background float64 // page background
	Foreground float64 // body text
	Primary    float64 // primary buttons, ring, chart-1
	Muted      float64 // muted, secondary and accent surfaces
	Border     float64 // borders and inputs
	Surface    float64 // how far card and popover sit from the background (signed)
}

// HueRange is an arc of the hue wheel: Span degrees clockwise from From.
// A Span of 360 is the whole wheel.
type HueRange struct {
	From, Span float64
}

// Mood is a visual personality: how saturated the palette is, how the
// lightness runs in each mode, and the default radius, shadow profile and
// fonts. Pattern and Hues are what a theme asked for by mood alone starts
// from (see MoodOptions): the harmony pattern that suits the mood, and the
// arc of seed hues its description calls for.
type Mood struct {
	Name          string
	Description   string
	Chroma        float64 // chroma of primary, accent and chart colours
	NeutralChroma float64 // tint of backgrounds, borders and text
	Light, Dark   Curve
	Radius        string // a radius stop name
	Shadow        string // a shadow profile name
	Fonts         Fonts
	Pattern       string   // a Patterns name
	Hues          HueRange // where a derived seed hue falls
}

// Moods returns the twelve moods in a fixed order.
func Moods() []Mood {
	return []Mood{
		{
			Name: "minimal", Description: "quiet neutrals, one clear accent, generous whitespace",
			Chroma: 0.13, NeutralChroma: 0.004,
			Light:  Curve{Background: 0.99, Foreground: 0.16, Primary: 0.52, Muted: 0.96, Border: 0.915, Surface: 0.01},
			Dark:   Curve{Background: 0.155, Foreground: 0.97, Primary: 0.72, Muted: 0.255, Border: 0.29, Surface: 0.03},
			Radius: "moderate", Shadow: "subtle",
			Pattern: "complementary", Hues: HueRange{From: 0, Span: 360},
			Fonts: Fonts{Sans: "Inter", Serif: "Source Serif 4", Mono: "JetBrains Mono"},
		},
		{
			Name: "premium", Description: "deep, confident primary on soft off-white; restrained colour",
			Chroma: 0.11, NeutralChroma: 0.008,
			Light:  Curve{Background: 0.985, Foreground: 0.19, Primary: 0.42, Muted: 0.955, Border: 0.905, Surface: 0.012},
			Dark:   Curve{Background: 0.145, Foreground: 0.965, Primary: 0.74, Muted: 0.245, Border: 0.285, Surface: 0.035},
			Radius: "moderate", Shadow: "moderate",
			Pattern: "analogous", Hues: HueRange{From: 200, Span: 100},
			Fonts: Fonts{Sans: "Geist", Serif: "Playfair Display", Mono: "Geist Mono"},
		},
		{
			Name: "playful", Description: "saturated candy colours, round corners, tinted surfaces",
			Chroma: 0.19, NeutralChroma: 0.018,
			Light:  Curve{Background: 0.985, Foreground: 0.24, Primary: 0.63, Muted: 0.95, Border: 0.9, Surface: 0.01},
			Dark:   Curve{Background: 0.195, Foreground: 0.97, Primary: 0.76, Muted: 0.285, Border: 0.33, Surface: 0.035},
			Radius: "pill", Shadow: "moderate",
			Pattern: "triadic", Hues: HueRange{From: 0, Span: 360},
			Fonts: Fonts{Sans: "Nunito", Serif: "Fraunces", Mono: "Space Mono"},
		},
		{
			Name: "industrial", Description: "steel greys, signal colour, tight corners",
			Chroma: 0.15, NeutralChroma: 0.006,
			Light:  Curve{Background: 0.96, Foreground: 0.18, Primary: 0.56, Muted: 0.925, Border: 0.85, Surface: 0.015},
			Dark:   Curve{Background: 0.17, Foreground: 0.945, Primary: 0.72, Muted: 0.255, Border: 0.32, Surface: 0.025},
			Radius: "subtle", Shadow: "moderate",
			Pattern: "complementary", Hues: HueRange{From: 20, Span: 70},
			Fonts: Fonts{Sans: "Space Grotesk", Serif: "Source Serif 4", Mono: "JetBrains Mono"},
		},
		{
			Name: "organic", Description: "earthy, warm-tinted paper, soft rounded shapes",
			Chroma: 0.1, NeutralChroma: 0.02,
			Light:  Curve{Background: 0.975, Foreground: 0.25, Primary: 0.52, Muted: 0.94, Border: 0.89, Surface: 0.01},
			Dark:   Curve{Background: 0.185, Foreground: 0.95, Primary: 0.72, Muted: 0.265, Border: 0.315, Surface: 0.03},
			Radius: "rounded", Shadow: "subtle",
			Pattern: "analogous", Hues: HueRange{From: 40, Span: 110},
			Fonts: Fonts{Sans: "Outfit", Serif: "Lora", Mono: "Fira Code"},
		},
		{
			Name: "editorial", Description: "ink on paper: high contrast, hairlines, no shadows",
			Chroma: 0.12, NeutralChroma: 0.005,
			Light:  Curve{Background: 0.99, Foreground: 0.14, Primary: 0.46, Muted: 0.96, Border: 0.9, Surface: 0.005},
			Dark:   Curve{Background: 0.14, Foreground: 0.96, Primary: 0.75, Muted: 0.24, Border: 0.29, Surface: 0.025},
			Radius: "subtle", Shadow: "none",
			Pattern: "monochromatic", Hues: HueRange{From: 0, Span: 360},
			Fonts: Fonts{Sans: "Manrope", Serif: "Merriweather", Mono: "IBM Plex Mono"},
		},
		{
			Name: "fashion-editorial", Description: "near-black and bone white, square corners, one whisper of colour",
			Chroma: 0.08, NeutralChroma: 0.003,
			Light:  Curve{Background: 0.995, Foreground: 0.11, Primary: 0.3, Muted: 0.965, Border: 0.88, Surface: 0},
			Dark:   Curve{Background: 0.1, Foreground: 0.98, Primary: 0.86, Muted: 0.22, Border: 0.3, Surface: 0.02},
			Radius: "none", Shadow: "none",
			Pattern: "monochromatic", Hues: HueRange{From: 0, Span: 360},
			Fonts: Fonts{Sans: "Montserrat", Serif: "Cormorant Garamond", Mono: "Space Mono"},
		},
		{
			Name: "brutalist", Description: "raw: pure white, black rules, loud colour, hard offset shadows",
			Chroma: 0.22, NeutralChroma: 0,
			Light:  Curve{Background: 1, Foreground: 0.1, Primary: 0.62, Muted: 0.93, Border: 0.15, Surface: 0},
			Dark:   Curve{Background: 0.1, Foreground: 1, Primary: 0.76, Muted: 0.22, Border: 0.9, Surface: 0.02},
			Radius: "none", Shadow: "harsh",
			Pattern: "complementary", Hues: HueRange{From: 0, Span: 360},
			Fonts: Fonts{Sans: "Space Grotesk", Serif: "Fraunces", Mono: "Space Mono"},
		},
		{
			Name: "zen", Description: "low chroma, warm stillness, soft rounded surfaces",
			Chroma: 0.06, NeutralChroma: 0.012,
			Light:  Curve{Background: 0.975, Foreground: 0.28, Primary: 0.55, Muted: 0.945, Border: 0.9, Surface: 0.01},
			Dark:   Curve{Background: 0.19, Foreground: 0.92, Primary: 0.72, Muted: 0.265, Border: 0.305, Surface: 0.03},
			Radius: "rounded", Shadow: "subtle",
			Pattern: "analogous", Hues: HueRange{From: 60, Span: 100},
			Fonts: Fonts{Sans: "DM Sans", Serif: "Lora", Mono: "Geist Mono"},
		},
		{
			Name: "corporate", Description: "trustworthy mid-saturation primary, crisp neutrals",
			Chroma: 0.15, NeutralChroma: 0.01,
			Light:  Curve{Background: 0.99, Foreground: 0.2, Primary: 0.52, Muted: 0.96, Border: 0.91, Surface: 0.01},
			Dark:   Curve{Background: 0.165, Foreground: 0.96, Primary: 0.68, Muted: 0.26, Border: 0.3, Surface: 0.03},
			Radius: "moderate", Shadow: "moderate",
			Pattern: "splitComplementary", Hues: HueRange{From: 220, Span: 50},
			Fonts: Fonts{Sans: "IBM Plex Sans", Serif: "Merriweather", Mono: "IBM Plex Mono"},
		},
		{
			Name: "retro", Description: "sun-faded warm paper, punchy colour, offset shadows",
			Chroma: 0.16, NeutralChroma: 0.03,
			Light:  Curve{Background: 0.955, Foreground: 0.25, Primary: 0.6, Muted: 0.915, Border: 0.3, Surface: 0.015},
			Dark:   Curve{Background: 0.2, Foreground: 0.93, Primary: 0.74, Muted: 0.285, Border: 0.75, Surface: 0.03},
			Radius: "moderate", Shadow: "harsh",
			Pattern: "triadic", Hues: HueRange{From: 20, Span: 80},
			Fonts: Fonts{Sans: "Poppins", Serif: "Fraunces", Mono: "Space Mono"},
		},
		{
			Name: "luxury", Description: "dark, rich primary, metallic accents, long soft shadows",
			Chroma: 0.09, NeutralChroma: 0.01,
			Light:  Curve{Background: 0.975, Foreground: 0.17, Primary: 0.4, Muted: 0.94, Border: 0.88, Surface: 0.012},
			Dark:   Curve{Background: 0.13, Foreground: 0.94, Primary: 0.78, Muted: 0.225, Border: 0.27, Surface: 0.035},
			Radius: "subtle", Shadow: "dramatic",
			Pattern: "fibonacci", Hues: HueRange{From: 300, Span: 90},
			Fonts: Fonts{Sans: "Plus Jakarta Sans", Serif: "Cormorant Garamond", Mono: "Geist Mono"},
		},
	}
}

// LookupMood finds a mood by name.
func LookupMood(name string) (Mood, error) {
	for _, m := range Moods() {
		if sameName(m.Name, name) {
			return m, nil
		}
	}
	return Mood{}, unknown("mood", name, names(Moods(), func(m Mood) string { return m.Name }))
}

// SeedHue derives a seed hue for m from key: a whole degree within m.Hues,
// always the same for the same key, spread over the arc for different
// keys. The harness derives key from the plan, so a plan that names a mood
// without a seed gets the same theme every time it is applied.
func (m Mood) SeedHue(key string) float64 {
	span := math.Floor(m.Hues.Span)
	if !(span >= 1 && span <= 360) {
		span = 360
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return NormalizeHue(math.Floor(m.Hues.From) + float64(h.Sum64()%uint64(span)))
}

// MoodOptions returns the generate options for a theme asked for by mood
// alone: the mood by its canonical name, its default pattern and a seed
// hue derived from key (Mood.SeedHue). Chroma, font, shadow profile and
// radius stay empty, so the mood's own apply; a caller may set any of them,
// or the seed or pattern, before building. "" means DefaultMood. An
// unknown mood is *UnknownNameError.
func MoodOptions(mood, key string) (GenerateOptions, error) {
	if mood == "" {
		mood = DefaultMood
	}
	m, err := LookupMood(mood)
	if err != nil {
		return GenerateOptions{}, err
	}
	return GenerateOptions{Seed: m.SeedHue(key), Pattern: m.Pattern, Mood: m.Name}, nil
}

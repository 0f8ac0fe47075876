package theme

import "math"

// ColorTokens returns the shadcn/ui colour token names, without the leading
// "--", in the order the CSS writer prints them.
func ColorTokens() []string {
	return []string{
		"background", "foreground",
		"card", "card-foreground",
		"popover", "popover-foreground",
		"primary", "primary-foreground",
		"secondary", "secondary-foreground",
		"muted", "muted-foreground",
		"accent", "accent-foreground",
		"destructive", "destructive-foreground",
		"border", "input", "ring",
		"chart-1", "chart-2", "chart-3", "chart-4", "chart-5",
		"sidebar", "sidebar-foreground",
		"sidebar-primary", "sidebar-primary-foreground",
		"sidebar-accent", "sidebar-accent-foreground",
		"sidebar-border", "sidebar-ring",
	}
}

// Tokens returns every custom property a complete theme defines in both
// the light (:root) and dark (.dark) blocks, without the leading "--":
// the colour tokens, font-sans, font-serif, font-mono, radius and the
// shadow scale. A css-theme-complete gate checks a stylesheet against it.
func Tokens() []string {
	out := ColorTokens()
	out = append(out, "font-sans", "font-serif", "font-mono", "radius")
	return append(out, ShadowTokens()...)
}

// Var is one CSS custom property: a name without "--" and its value.
type Var struct {
	Name, Value string
}

// Mode is one half of a theme, light or dark.
type Mode struct {
	Name    string           // "light" or "dark"
	Colors  map[string]OKLCH // every colour token, quantized
	Fonts   Fonts
	Radius  string   // a CSS length
	Shadows []string // box-shadow values in ShadowTokens order
}

// Vars returns the mode's custom properties in Tokens order.
func (m Mode) Vars() []Var {
	out := make([]Var, 0, len(Tokens()))
	for _, name := range ColorTokens() {
		out = append(out, Var{name, m.Colors[name].String()})
	}
	out = append(out,
		Var{"font-sans", fontStack(m.Fonts.Sans, Sans)},
		Var{"font-serif", fontStack(m.Fonts.Serif, Serif)},
		Var{"font-mono", fontStack(m.Fonts.Mono, Mono)},
		Var{"radius", m.Radius},
	)
	for i, name := range ShadowTokens() {
		out = append(out, Var{name, m.Shadows[i]})
	}
	return out
}

// spec is everything the token builder needs, resolved from a mood, a
// pattern and the caller's overrides.
type spec struct {
	hues          []float64 // pattern hues; hues[0] is the primary hue
	chroma        float64
	neutralChroma float64
	neutralHue    float64
	light, dark   Curve
	radius        RadiusStop
	shadow        ShadowProfile
	fonts         Fonts
}

// shift rotates every hue of s by deg.
func (s *spec) shift(deg float64) {
	for i := range s.hues {
		s.hues[i] = NormalizeHue(s.hues[i] + deg)
	}
	s.neutralHue = NormalizeHue(s.neutralHue + deg)
}

// buildMode derives every token of one mode from s and fixes contrast.
func buildMode(s spec, dark bool) (Mode, []Adjustment) {
	name, cv := "light", s.light
	if dark {
		name, cv = "dark", s.dark
	}
	n := len(s.hues)
	hP, hA, hS := s.hues[0], s.hues[min(1, n-1)], s.hues[min(2, n-1)]
	c, nc, nh := s.chroma, s.neutralChroma, s.neutralHue
	q := func(l, ch, h float64) OKLCH { return OKLCH{L: l, C: ch, H: h}.Quantize() }
	// sign is the direction of "further from the background": lighter in
	// dark mode, darker in light mode.
	sign := 1.0
	if !dark {
		sign = -1
	}

	col := map[string]OKLCH{}
	col["background"] = q(cv.Background, nc, nh)
	col["foreground"] = q(cv.Foreground, min(nc*1.5, 0.03), nh)
	col["card"] = q(math.Min(1, cv.Background+cv.Surface), nc, nh)
	col["popover"] = col["card"]
	col["card-foreground"] = col["foreground"]
	col["popover-foreground"] = col["foreground"]

	col["primary"] = q(cv.Primary, c, hP)
	col["primary-foreground"] = onColor(col["primary"], min(c*0.1, 0.02), hP)

	col["muted"] = q(cv.Muted, nc, nh)
	mfL := 0.5
	if dark {
		mfL = 0.72
	}
	col["muted-foreground"] = q(mfL, min(nc*2, 0.04), nh)

	if dark {
		col["secondary"] = q(cv.Muted+0.02, min(c*0.25, 0.045), hS)
		col["secondary-foreground"] = q(0.95, min(c*0.1, 0.02), hS)
		col["accent"] = q(cv.Muted+0.06, min(c*0.5, 0.11), hA)
		col["accent-foreground"] = q(0.96, min(c*0.15, 0.03), hA)
		col["destructive"] = q(0.62, 0.2, 22)
	} else {
		col["secondary"] = q(cv.Muted-0.005, min(c*0.3, 0.06), hS)
		col["secondary-foreground"] = q(cv.Foreground+0.06, min(c*0.4, 0.07), hS)
		col["accent"] = q(cv.Muted-0.015, min(c*0.45, 0.09), hA)
		col["accent-foreground"] = q(cv.Foreground+0.05, min(c*0.45, 0.09), hA)
		col["destructive"] = q(0.577, 0.245, 27.3)
	}
	col["destructive-foreground"] = onColor(col["destructive"], 0.01, col["destructive"].H)

	col["border"] = q(cv.Border, nc, nh)
	col["input"] = col["border"]
	if dark {
		col["input"] = q(cv.Border+0.03, nc, nh)
	}
	col["ring"] = q(cv.Primary, c*0.7, hP)

	chartL := []float64{0.62, 0.55, 0.7, 0.48, 0.78}
	if dark {
		chartL = []float64{0.7, 0.62, 0.78, 0.55, 0.85}
	}
	for i := range 5 {
		h := s.hues[i%n]
		col[chartName(i)] = q(min(chartL[i]+yellowLift(h), 0.9), c*(1-0.05*float64(i)), h)
	}

	col["sidebar"] = q(cv.Background+sign*0.015, nc, nh)
	if dark {
		col["sidebar"] = q(cv.Background+cv.Surface*0.6, nc, nh)
	}
	col["sidebar-foreground"] = col["foreground"]
	col["sidebar-accent"] = q(col["sidebar"].L+sign*0.04, min(c*0.25, 0.05), hP)
	col["sidebar-accent-foreground"] = col["foreground"]
	col["sidebar-border"] = col["border"]
	col["sidebar-ring"] = col["ring"]

	// The sidebar's primary pair is the primary pair again: fix it once
	// and copy it, so the adjustment is reported once.
	var pairs []Pair
	for _, p := range TextPairs() {
		if p.Background != "sidebar-primary" {
			pairs = append(pairs, p)
		}
	}
	adj := fixContrast(name, col, pairs)
	col["sidebar-primary"] = col["primary"]
	col["sidebar-primary-foreground"] = col["primary-foreground"]

	shadowColor := OKLCH{L: 0.2, C: min(nc*2, 0.03), H: nh}.Quantize()
	switch {
	case s.shadow.Offset:
		shadowColor = col["foreground"]
	case dark:
		shadowColor = OKLCH{}
	}
	return Mode{
		Name:    name,
		Colors:  col,
		Fonts:   s.fonts,
		Radius:  s.radius.Value,
		Shadows: s.shadow.shadows(shadowColor, dark),
	}, adj
}

// yellowLift is extra lightness for hues near yellow (95°), which turn
// olive and brown when they are as dark as other hues.
func yellowLift(h float64) float64 {
	d := math.Abs(h - 95)
	return 0.16 * math.Max(0, 1-d/45)
}

func chartName(i int) string {
	return "chart-" + string(rune('1'+i))
}

// onColor picks near-white or near-black text for a coloured surface,
// whichever contrasts more, tinted towards hue h.
func onColor(bg OKLCH, chroma, h float64) OKLCH {
	light := OKLCH{L: 0.985, C: chroma, H: h}.Quantize()
	dark := OKLCH{L: 0.17, C: chroma * 2, H: h}.Quantize()
	if Contrast(light, bg) >= Contrast(dark, bg) {
		return light
	}
	return dark
}

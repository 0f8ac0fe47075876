package theme

import (
	"fmt"
	"math"
)

// MinContrast is the WCAG 2 AA contrast ratio for normal-size text.
const MinContrast = 4.5

// RelativeLuminance is the WCAG 2 relative luminance of a gamma-encoded sRGB
// colour: the channels are linearised and weighted 0.2126, 0.7152, 0.0722.
func RelativeLuminance(c RGB) float64 {
	lin := c.Decode()
	return 0.2126*lin.R + 0.7152*lin.G + 0.0722*lin.B
}

// Contrast is the WCAG 2 contrast ratio between two colours, from 1 to 21.
// Both are mapped into sRGB first, as a browser would show them.
func Contrast(a, b OKLCH) float64 {
	la, lb := RelativeLuminance(a.SRGB()), RelativeLuminance(b.SRGB())
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// Pair is a text colour token and the surface token it is drawn on.
type Pair struct {
	Foreground, Background string
}

// TextPairs lists every foreground/background pair a theme must keep at AA
// contrast. muted-foreground is checked on the page and card surfaces as
// well as on muted, because that is where secondary text usually sits.
func TextPairs() []Pair {
	return []Pair{
		{"foreground", "background"},
		{"card-foreground", "card"},
		{"popover-foreground", "popover"},
		{"primary-foreground", "primary"},
		{"secondary-foreground", "secondary"},
		{"muted-foreground", "muted"},
		{"muted-foreground", "background"},
		{"muted-foreground", "card"},
		{"accent-foreground", "accent"},
		{"destructive-foreground", "destructive"},
		{"sidebar-foreground", "sidebar"},
		{"sidebar-primary-foreground", "sidebar-primary"},
		{"sidebar-accent-foreground", "sidebar-accent"},
	}
}

// Adjustment records one lightness change the engine made so that a text
// pair passes AA contrast.
type Adjustment struct {
	Mode     string  // "light" or "dark"
	Token    string  // the token whose lightness changed
	Pair     Pair    // the pair that failed
	From, To float64 // lightness before and after
	Ratio    float64 // contrast of the pair afterwards
}

func (a Adjustment) String() string {
	return fmt.Sprintf("%s %s: lightness %s → %s so %s on %s reaches %.2f:1",
		a.Mode, a.Token, fixed(a.From, 3), fixed(a.To, 3), a.Pair.Foreground, a.Pair.Background, a.Ratio)
}

// ContrastFailure is a text pair below AA contrast.
type ContrastFailure struct {
	Mode  string
	Pair  Pair
	Ratio float64
}

func (f ContrastFailure) String() string {
	return fmt.Sprintf("%s: %s on %s is %.2f:1, below %.1f:1", f.Mode, f.Pair.Foreground, f.Pair.Background, f.Ratio, MinContrast)
}

// checkContrast returns the pairs of colors below AA contrast.
func checkContrast(mode string, colors map[string]OKLCH) []ContrastFailure {
	var out []ContrastFailure
	for _, p := range TextPairs() {
		if r := Contrast(colors[p.Foreground], colors[p.Background]); r < MinContrast {
			out = append(out, ContrastFailure{Mode: mode, Pair: p, Ratio: r})
		}
	}
	return out
}

// fixContrast moves lightness until every text pair in colors passes AA,
// returning what it changed. The text colour moves first, away from its
// surface; if it reaches black or white and the pair still fails, the
// surface moves the other way. Colours stay quantized throughout, so the
// ratio checked is the ratio of the values printed.
func fixContrast(mode string, colors map[string]OKLCH, pairs []Pair) []Adjustment {
	var adj []Adjustment
	for pass := 0; pass < 8; pass++ {
		changed := false
		for _, p := range pairs {
			fg, bg := colors[p.Foreground], colors[p.Background]
			if Contrast(fg, bg) >= MinContrast {
				continue
			}
			changed = true
			dir := 1.0
			if fg.L < bg.L || (fg.L == bg.L && bg.L > 0.5) {
				dir = -1
			}
			from := fg.L
			for Contrast(fg, bg) < MinContrast && inside(fg.L+dir*0.005) {
				fg = step(fg, dir*0.005)
			}
			colors[p.Foreground] = fg
			if fg.L != from {
				adj = append(adj, Adjustment{Mode: mode, Token: p.Foreground, Pair: p, From: from, To: fg.L, Ratio: Contrast(fg, bg)})
			}
			if Contrast(fg, bg) >= MinContrast {
				continue
			}
			from = bg.L
			for Contrast(fg, bg) < MinContrast && inside(bg.L-dir*0.005) {
				bg = step(bg, -dir*0.005)
			}
			colors[p.Background] = bg
			adj = append(adj, Adjustment{Mode: mode, Token: p.Background, Pair: p, From: from, To: bg.L, Ratio: Contrast(fg, bg)})
		}
		if !changed {
			break
		}
	}
	return adj
}

func inside(l float64) bool { return l >= -1e-9 && l <= 1+1e-9 }

func step(c OKLCH, dl float64) OKLCH {
	c.L = math.Round((c.L+dl)*1000) / 1000
	return c.Quantize()
}

package theme

import (
	"fmt"
	"strings"
)

// ShadowProfile is a family of box shadows, from the smallest (shadow-2xs)
// to the largest (shadow-2xl).
type ShadowProfile struct {
	Name        string
	Description string
	Distance    float64 // multiplies the vertical offset of each size
	Blur        float64 // multiplies the blur radius; 0 gives hard edges
	Opacity     float64 // alpha of the shadow colour at size "shadow"
	Offset      bool    // hard shadows: offset x equals y, no spread
}

// ShadowProfiles returns the five shadow profiles, flattest first.
func ShadowProfiles() []ShadowProfile {
	return []ShadowProfile{
		{Name: "none", Description: "flat: no shadows at all"},
		{Name: "subtle", Description: "soft, close shadows that barely lift a card", Distance: 0.6, Blur: 0.8, Opacity: 0.06},
		{Name: "moderate", Description: "the usual soft elevation", Distance: 1, Blur: 1, Opacity: 0.10},
		{Name: "dramatic", Description: "long, deep shadows for floating surfaces", Distance: 1.8, Blur: 1.6, Opacity: 0.20},
		{Name: "harsh", Description: "hard offset shadows with no blur, brutalist", Distance: 1, Opacity: 1, Offset: true},
	}
}

// LookupShadowProfile finds a shadow profile by name.
func LookupShadowProfile(name string) (ShadowProfile, error) {
	for _, s := range ShadowProfiles() {
		if sameName(s.Name, name) {
			return s, nil
		}
	}
	return ShadowProfile{}, unknown("shadow profile", name, names(ShadowProfiles(), func(s ShadowProfile) string { return s.Name }))
}

// shadowSize is one step of the shadow scale.
type shadowSize struct {
	token               string
	y, blur, spread, hy float64 // hy: hard-shadow offset
	alpha               float64 // multiplies the profile opacity
}

func shadowSizes() []shadowSize {
	return []shadowSize{
		{"shadow-2xs", 1, 2, 0, 1, 0.5},
		{"shadow-xs", 1, 3, 0, 2, 0.6},
		{"shadow-sm", 2, 4, -1, 2, 0.8},
		{"shadow", 3, 6, -1, 3, 1},
		{"shadow-md", 4, 10, -2, 4, 1},
		{"shadow-lg", 8, 18, -4, 5, 1.1},
		{"shadow-xl", 14, 28, -6, 6, 1.2},
		{"shadow-2xl", 24, 48, -12, 8, 1.5},
	}
}

// ShadowTokens returns the shadow token names, smallest first.
func ShadowTokens() []string {
	return names(shadowSizes(), func(s shadowSize) string { return s.token })
}

// shadows renders the profile's box-shadow values in token order. color is
// the shadow colour without alpha; dark scales the alpha up, because a
// shadow on a dark surface needs more weight to be seen.
func (p ShadowProfile) shadows(color OKLCH, dark bool) []string {
	out := make([]string, 0, 8)
	for _, s := range shadowSizes() {
		if p.Opacity == 0 {
			out = append(out, "0 0 0 0 transparent")
			continue
		}
		a := p.Opacity * s.alpha
		if dark && !p.Offset {
			a *= 2.5
		}
		a = min(a, 1)
		c := fmt.Sprintf("oklch(%s %s %s / %s)", fixed(color.L, 3), fixed(color.C, 3), fixed(color.H, 1), fixed(a, 2))
		if p.Offset {
			out = append(out, fmt.Sprintf("%spx %spx 0px 0px %s", px(s.hy), px(s.hy), c))
			continue
		}
		out = append(out, fmt.Sprintf("0px %spx %spx %spx %s", px(s.y*p.Distance), px(s.blur*p.Blur), px(s.spread), c))
	}
	return out
}

func px(x float64) string {
	s := fixed(x, 1)
	return strings.TrimSuffix(s, ".0")
}

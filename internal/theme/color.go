package theme

import (
	"fmt"
	"math"
)

// OKLCH is a colour in the OKLCH space: perceptual lightness L in [0, 1],
// chroma C (0 is grey; sRGB colours stay below about 0.37) and hue H in
// degrees [0, 360).
type OKLCH struct {
	L, C, H float64
}

// OKLab is a colour in the OKLab space: lightness L and the opponent axes A
// (green–red) and B (blue–yellow).
type OKLab struct {
	L, A, B float64
}

// RGB is a colour with three channels in [0, 1]. Whether the channels are
// linear light or gamma-encoded sRGB depends on where the value came from.
type RGB struct {
	R, G, B float64
}

// gamutEpsilon is how far outside [0, 1] a linear channel may sit and still
// count as in gamut; it absorbs floating-point noise from the matrices.
const gamutEpsilon = 1e-7

// OKLab converts c to OKLab.
func (c OKLCH) OKLab() OKLab {
	h := c.H * math.Pi / 180
	return OKLab{L: c.L, A: c.C * math.Cos(h), B: c.C * math.Sin(h)}
}

// OKLCH converts c to OKLCH. A grey (chroma below 1e-9) gets hue 0.
func (c OKLab) OKLCH() OKLCH {
	ch := math.Hypot(c.A, c.B)
	if ch < 1e-9 {
		return OKLCH{L: c.L}
	}
	return OKLCH{L: c.L, C: ch, H: NormalizeHue(math.Atan2(c.B, c.A) * 180 / math.Pi)}
}

// LinearSRGB converts c to linear-light sRGB with Björn Ottosson's OKLab
// matrices. Channels may fall outside [0, 1] for out-of-gamut colours.
func (c OKLab) LinearSRGB() RGB {
	l := c.L + 0.3963377774*c.A + 0.2158037573*c.B
	m := c.L - 0.1055613458*c.A - 0.0638541728*c.B
	s := c.L - 0.0894841775*c.A - 1.2914855480*c.B
	l, m, s = l*l*l, m*m*m, s*s*s
	return RGB{
		R: +4.0767416621*l - 3.3077115913*m + 0.2309699292*s,
		G: -1.2684380046*l + 2.6097574011*m - 0.3413193965*s,
		B: -0.0041960863*l - 0.7034186147*m + 1.7076147010*s,
	}
}

// LinearToOKLab converts a linear-light sRGB colour to OKLab.
func LinearToOKLab(c RGB) OKLab {
	l := 0.4122214708*c.R + 0.5363325363*c.G + 0.0514459929*c.B
	m := 0.2119034982*c.R + 0.6806995451*c.G + 0.1073969566*c.B
	s := 0.0883024619*c.R + 0.2817188376*c.G + 0.6299787005*c.B
	l, m, s = math.Cbrt(l), math.Cbrt(m), math.Cbrt(s)
	return OKLab{
		L: 0.2104542553*l + 0.7936177850*m - 0.0040720468*s,
		A: 1.9779984951*l - 2.4285922050*m + 0.4505937099*s,
		B: 0.0259040371*l + 0.7827717662*m - 0.8086757660*s,
	}
}

// Encode applies the sRGB transfer function to a linear-light colour,
// clamping each channel to [0, 1] first.
func (c RGB) Encode() RGB {
	return RGB{R: encodeChannel(c.R), G: encodeChannel(c.G), B: encodeChannel(c.B)}
}

// Decode removes the sRGB transfer function, giving linear light.
func (c RGB) Decode() RGB {
	return RGB{R: decodeChannel(c.R), G: decodeChannel(c.G), B: decodeChannel(c.B)}
}

// InGamut reports whether a linear-light colour lies inside the sRGB gamut.
func (c RGB) InGamut() bool {
	in := func(x float64) bool { return x >= -gamutEpsilon && x <= 1+gamutEpsilon }
	return in(c.R) && in(c.G) && in(c.B)
}

// Hex formats a gamma-encoded sRGB colour as #rrggbb.
func (c RGB) Hex() string {
	b := func(x float64) int { return int(math.Round(clamp01(x) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", b(c.R), b(c.G), b(c.B))
}

func encodeChannel(x float64) float64 {
	x = clamp01(x)
	if x <= 0.0031308 {
		return 12.92 * x
	}
	return 1.055*math.Pow(x, 1/2.4) - 0.055
}

func decodeChannel(x float64) float64 {
	x = clamp01(x)
	if x <= 0.04045 {
		return x / 12.92
	}
	return math.Pow((x+0.055)/1.055, 2.4)
}

// SRGB converts c to gamma-encoded sRGB, mapping it into the gamut first.
func (c OKLCH) SRGB() RGB {
	return c.ToGamut().OKLab().LinearSRGB().Encode()
}

// InGamut reports whether c can be shown on an sRGB display as written.
func (c OKLCH) InGamut() bool {
	return c.OKLab().LinearSRGB().InGamut()
}

// ToGamut maps c into sRGB by reducing chroma at fixed lightness and hue (a
// bisection to within 1e-6). Lightness is clamped to [0, 1] first.
func (c OKLCH) ToGamut() OKLCH {
	c.L = clamp01(c.L)
	c.H = NormalizeHue(c.H)
	if c.C < 0 {
		c.C = 0
	}
	if c.InGamut() {
		return c
	}
	lo, hi := 0.0, c.C
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if (OKLCH{L: c.L, C: mid, H: c.H}).InGamut() {
			lo = mid
		} else {
			hi = mid
		}
	}
	c.C = lo
	return c
}

// Quantize returns the colour exactly as the CSS writer prints it: in
// gamut, lightness and chroma to three decimals, hue to one. Chroma is
// rounded down, and stepped down further if rounding lightness pushed the
// colour out of gamut, so the printed value is always displayable. A grey
// gets hue 0.
func (c OKLCH) Quantize() OKLCH {
	c = c.ToGamut()
	q := OKLCH{
		L: math.Round(c.L*1000) / 1000,
		C: math.Floor(c.C*1000+1e-9) / 1000,
		H: NormalizeHue(math.Round(c.H*10) / 10),
	}
	for q.C > 0 && !q.InGamut() {
		q.C = math.Round((q.C-0.001)*1000) / 1000
	}
	if q.C <= 0 {
		q.C, q.H = 0, 0
	}
	return q
}

// String formats c as a CSS oklch() value with fixed decimals, for example
// "oklch(0.623 0.214 259.8)". It does not quantize; call Quantize first to
// get a value that is in gamut.
func (c OKLCH) String() string {
	return fmt.Sprintf("oklch(%s %s %s)", fixed(c.L, 3), fixed(c.C, 3), fixed(c.H, 1))
}

// NormalizeHue maps any angle in degrees into [0, 360).
func NormalizeHue(h float64) float64 {
	h = math.Mod(h, 360)
	if h < 0 {
		h += 360
	}
	if h >= 360 {
		h = 0
	}
	return h
}

// fixed formats x with the given decimals and never prints "-0".
func fixed(x float64, decimals int) string {
	s := fmt.Sprintf("%.*f", decimals, x)
	if s[0] == '-' {
		zero := true
		for _, r := range s[1:] {
			if r != '0' && r != '.' {
				zero = false
				break
			}
		}
		if zero {
			s = s[1:]
		}
	}
	return s
}

func clamp01(x float64) float64 {
	return math.Max(0, math.Min(1, x))
}

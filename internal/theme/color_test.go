package theme

import (
	"math"
	"testing"
)

func TestKnownConversions(t *testing.T) {
	tests := []struct {
		name string
		rgb  RGB // gamma-encoded sRGB
		want OKLCH
	}{
		{"white", RGB{1, 1, 1}, OKLCH{1, 0, 0}},
		{"black", RGB{0, 0, 0}, OKLCH{0, 0, 0}},
		// Reference values from the CSS Color 4 sample code.
		{"red", RGB{1, 0, 0}, OKLCH{0.62796, 0.25768, 29.234}},
		{"green", RGB{0, 1, 0}, OKLCH{0.86644, 0.29483, 142.495}},
		{"blue", RGB{0, 0, 1}, OKLCH{0.45201, 0.31321, 264.052}},
	}
	for _, tt := range tests {
		got := LinearToOKLab(tt.rgb.Decode()).OKLCH()
		if math.Abs(got.L-tt.want.L) > 1e-3 || math.Abs(got.C-tt.want.C) > 1e-3 ||
			(tt.want.C > 0 && math.Abs(got.H-tt.want.H) > 0.1) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for r := 0.0; r <= 1; r += 0.125 {
		for g := 0.0; g <= 1; g += 0.125 {
			for b := 0.0; b <= 1; b += 0.125 {
				in := RGB{r, g, b}
				out := LinearToOKLab(in.Decode()).OKLCH().SRGB()
				if math.Abs(out.R-r) > 1e-4 || math.Abs(out.G-g) > 1e-4 || math.Abs(out.B-b) > 1e-4 {
					t.Fatalf("round trip %v → %v", in, out)
				}
			}
		}
	}
}

func TestToGamutKeepsLightnessAndHue(t *testing.T) {
	for h := 0.0; h < 360; h += 7.5 {
		for _, l := range []float64{0.05, 0.3, 0.5, 0.7, 0.95} {
			c := OKLCH{L: l, C: 0.4, H: h}
			g := c.ToGamut()
			if !g.InGamut() {
				t.Fatalf("%v mapped to %v, still out of gamut", c, g)
			}
			if g.L != l || g.H != h || g.C > c.C {
				t.Fatalf("%v mapped to %v: lightness or hue moved", c, g)
			}
			// Maximal: a little more chroma leaves the gamut.
			if (OKLCH{L: l, C: g.C + 1e-4, H: h}).InGamut() {
				t.Fatalf("%v mapped to %v: chroma reduced more than needed", c, g)
			}
			if q := c.Quantize(); !q.InGamut() {
				t.Fatalf("quantized %v is out of gamut", q)
			}
		}
	}
}

func TestStringFixedDecimals(t *testing.T) {
	if got, want := (OKLCH{L: 0.5, C: 0.1234, H: 12}).String(), "oklch(0.500 0.123 12.0)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (OKLCH{L: -0.0001}).String(), "oklch(0.000 0.000 0.0)"; got != want {
		t.Errorf("negative zero: got %q, want %q", got, want)
	}
}

func TestContrastReference(t *testing.T) {
	white, black := OKLCH{L: 1}, OKLCH{}
	if got := Contrast(white, black); math.Abs(got-21) > 1e-6 {
		t.Errorf("white/black contrast %v, want 21", got)
	}
	// #777777 on white is the classic 4.48:1 near-miss.
	grey := LinearToOKLab(RGB{0x77 / 255.0, 0x77 / 255.0, 0x77 / 255.0}.Decode()).OKLCH()
	if got := Contrast(grey, white); math.Abs(got-4.48) > 0.01 {
		t.Errorf("#777 on white: %v, want 4.48", got)
	}
}

func TestNormalizeHue(t *testing.T) {
	for in, want := range map[float64]float64{-30: 330, 360: 0, 725: 5, 0: 0, -720: 0} {
		if got := NormalizeHue(in); got != want {
			t.Errorf("NormalizeHue(%v) = %v, want %v", in, got, want)
		}
	}
}

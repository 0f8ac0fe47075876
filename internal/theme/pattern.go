package theme

import "math"

// Pattern is a colour-harmony rule: a fixed list of hue offsets in degrees
// from the seed hue. The first offset is always 0 (the primary hue); the
// second becomes the accent hue, the third the secondary hue, and the chart
// colours cycle through all of them.
type Pattern struct {
	Name        string
	Description string
	Offsets     []float64
}

// Hues returns the pattern's hues for a seed hue, each in [0, 360).
func (p Pattern) Hues(seed float64) []float64 {
	out := make([]float64, len(p.Offsets))
	for i, o := range p.Offsets {
		out[i] = NormalizeHue(seed + o)
	}
	return out
}

// goldenAngle is 360° divided by the golden ratio squared, ≈137.508°: the
// angle between successive leaves in a sunflower head.
const goldenAngle = 360 / (math.Phi * math.Phi)

// Patterns returns the eleven harmony patterns in a fixed order. The five
// geometric ones are ralph's own constructions:
//
//   - goldenRatio: five hues, each a golden angle (≈137.5°) past the one
//     before, so no two ever line up — the phyllotaxis spiral.
//   - flowerOfLife: six hues 60° apart, the six-fold symmetry of the
//     hexagonal circle lattice.
//   - fibonacci: the seed plus offsets that are Fibonacci numbers in degrees
//     (21, 55, 144, 233): two near neighbours and two far ones.
//   - vesicaPiscis: two equal circles through each other's centres; the
//     lens between them spans 120°, so the accent sits on the lens axis at
//     60° and the secondary on the far centre at 120°.
//   - seedOfLife: seven circles — a centre and six around it — read as seven
//     hues evenly spaced, 360°/7 ≈ 51.4° apart.
func Patterns() []Pattern {
	g := goldenAngle
	return []Pattern{
		{"monochromatic", "one hue; roles differ only in lightness and chroma", []float64{0}},
		{"analogous", "the seed and its neighbours 30° either side", []float64{0, 30, -30}},
		{"complementary", "the seed and the hue opposite it", []float64{0, 180}},
		{"splitComplementary", "the seed and the two hues 30° either side of its complement", []float64{0, 210, 150}},
		{"triadic", "three hues 120° apart", []float64{0, 120, 240}},
		{"tetradic", "four hues 90° apart (a square)", []float64{0, 90, 180, 270}},
		{"goldenRatio", "five hues a golden angle (≈137.5°) apart, like sunflower seeds", []float64{0, g, 2 * g, 3 * g, 4 * g}},
		{"flowerOfLife", "six hues 60° apart, the hexagonal symmetry of the flower of life", []float64{0, 60, 120, 180, 240, 300}},
		{"fibonacci", "offsets that are Fibonacci numbers of degrees: 0, 21, 55, 144, 233", []float64{0, 21, 55, 144, 233}},
		{"vesicaPiscis", "two overlapping circles: the lens axis at 60°, the far centre at 120°", []float64{0, 60, 120}},
		{"seedOfLife", "seven hues evenly spaced (360°/7), the seven circles of the seed of life", []float64{0, 360.0 / 7, 720.0 / 7, 1080.0 / 7, 1440.0 / 7, 1800.0 / 7, 2160.0 / 7}},
	}
}

// LookupPattern finds a pattern by name. The match ignores case, hyphens
// and underscores, so "split-complementary" finds splitComplementary.
func LookupPattern(name string) (Pattern, error) {
	for _, p := range Patterns() {
		if sameName(p.Name, name) {
			return p, nil
		}
	}
	return Pattern{}, unknown("pattern", name, names(Patterns(), func(p Pattern) string { return p.Name }))
}

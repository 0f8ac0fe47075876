package theme

// PresetInfo describes a preset: a seed hue, pattern and mood, plus the
// overrides that give it its look.
type PresetInfo struct {
	Name        string
	Description string
	Options     GenerateOptions
}

// preset is a PresetInfo with the overrides that GenerateOptions cannot
// express (surface tint, lightness curve tweaks).
type preset struct {
	PresetInfo
	tweak func(*spec)
}

// Presets returns the twelve presets in a fixed order.
func Presets() []PresetInfo {
	ps := presets()
	out := make([]PresetInfo, len(ps))
	for i, p := range ps {
		out[i] = p.PresetInfo
	}
	return out
}

func lookupPreset(name string) (preset, error) {
	for _, p := range presets() {
		if sameName(p.Name, name) {
			return p, nil
		}
	}
	return preset{}, unknown("preset", name, names(Presets(), func(p PresetInfo) string { return p.Name }))
}

func chroma(c float64) *float64 { return &c }

func presets() []preset {
	return []preset{
		{PresetInfo{"northern-lights", "aurora green over a night-blue sky, violet and lime glows",
			GenerateOptions{Seed: 165, Pattern: "goldenRatio", Mood: "premium", Chroma: chroma(0.14)}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 250, 0.02
				s.light.Primary = 0.5
				s.dark.Background, s.dark.Muted, s.dark.Border = 0.18, 0.27, 0.31
				s.dark.Primary = 0.8
			}},
		{PresetInfo{"cyberpunk", "hot magenta and electric cyan on violet-black, sharp corners",
			GenerateOptions{Seed: 345, Pattern: "splitComplementary", Mood: "industrial", Chroma: chroma(0.26), Radius: "none", ShadowProfile: "dramatic"}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 295, 0.03
				s.light.Background, s.light.Primary = 0.97, 0.6
				s.dark.Background, s.dark.Muted, s.dark.Border = 0.13, 0.23, 0.3
				s.dark.Primary = 0.68
			}},
		{PresetInfo{"doom-64", "blood red and rust on scorched brown, hard pixel shadows",
			GenerateOptions{Seed: 28, Pattern: "analogous", Mood: "industrial", Chroma: chroma(0.2), Radius: "none", ShadowProfile: "harsh"}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 60, 0.016
				s.light.Background, s.light.Muted, s.light.Border, s.light.Primary = 0.93, 0.895, 0.8, 0.5
				s.dark.Background, s.dark.Muted, s.dark.Border, s.dark.Primary = 0.17, 0.25, 0.33, 0.6
				s.fonts.Mono = "VT323"
			}},
		{PresetInfo{"retro-arcade", "neon magenta, coin-op yellow and CRT blue, monospace type",
			GenerateOptions{Seed: 330, Pattern: "tetradic", Mood: "retro", Chroma: chroma(0.2), Font: "Space Mono"}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 280, 0.02
				s.light.Background, s.light.Border = 0.965, 0.25
				s.dark.Background, s.dark.Border = 0.17, 0.8
				s.fonts.Mono = "VT323"
			}},
		{PresetInfo{"soft-pop", "pastel violet with coral, lime and aqua, bouncy round shapes",
			GenerateOptions{Seed: 285, Pattern: "tetradic", Mood: "playful", Chroma: chroma(0.15)}},
			func(s *spec) {
				s.neutralChroma = 0.015
				s.light.Primary, s.light.Muted = 0.6, 0.955
				s.dark.Primary = 0.78
			}},
		{PresetInfo{"tangerine", "zesty orange with sunny neighbours on warm white",
			GenerateOptions{Seed: 48, Pattern: "analogous", Mood: "corporate", Chroma: chroma(0.19), Radius: "rounded"}},
			func(s *spec) {
				s.neutralChroma = 0.012
				s.light.Primary = 0.64
				s.dark.Primary = 0.72
			}},
		{PresetInfo{"mono", "black, white and greys only, monospace everything, square corners",
			GenerateOptions{Seed: 0, Pattern: "monochromatic", Mood: "minimal", Chroma: chroma(0), Font: "Geist Mono", Radius: "none", ShadowProfile: "none"}},
			func(s *spec) {
				s.light.Primary = 0.2
				s.dark.Primary = 0.92
			}},
		{PresetInfo{"elegant-luxury", "deep wine, copper and antique gold on ivory",
			GenerateOptions{Seed: 18, Pattern: "fibonacci", Mood: "luxury", Chroma: chroma(0.14)}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 70, 0.014
				s.light.Primary = 0.42
				s.dark.Primary = 0.5
			}},
		{PresetInfo{"bubblegum", "bubblegum pink and mint, pill shapes, hard cartoon shadows",
			GenerateOptions{Seed: 350, Pattern: "complementary", Mood: "playful", Chroma: chroma(0.17), ShadowProfile: "harsh"}},
			func(s *spec) {
				s.neutralChroma = 0.025
				s.light.Primary, s.light.Border = 0.64, 0.3
				s.dark.Primary, s.dark.Border = 0.8, 0.7
			}},
		{PresetInfo{"mocha-mousse", "milky cocoa browns on cream, soft and warm",
			GenerateOptions{Seed: 45, Pattern: "analogous", Mood: "organic", Chroma: chroma(0.075)}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 60, 0.02
				s.light.Primary = 0.56
				s.dark.Primary = 0.72
			}},
		{PresetInfo{"caffeine", "espresso on steamed milk, crema highlights",
			GenerateOptions{Seed: 55, Pattern: "monochromatic", Mood: "premium", Chroma: chroma(0.06)}},
			func(s *spec) {
				s.neutralChroma = 0.012
				s.light.Primary = 0.36
				s.dark.Primary, s.dark.Background = 0.82, 0.17
			}},
		{PresetInfo{"catppuccin", "soothing pastel mauve on lavender-grey, seven pastel accents",
			GenerateOptions{Seed: 305, Pattern: "seedOfLife", Mood: "zen", Chroma: chroma(0.15)}},
			func(s *spec) {
				s.neutralHue, s.neutralChroma = 283, 0.03
				s.light.Background, s.light.Muted, s.light.Border, s.light.Primary = 0.958, 0.92, 0.87, 0.55
				s.dark.Background, s.dark.Muted, s.dark.Border, s.dark.Primary = 0.24, 0.31, 0.36, 0.79
				s.dark.Foreground = 0.88
			}},
	}
}

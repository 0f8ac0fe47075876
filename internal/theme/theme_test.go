package theme

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file; run go test ./internal/theme -update and review the diff", name)
	}
}

func TestGoldenPresets(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			th, err := Preset(p.Name)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "preset-"+p.Name+".css", th.CSS()+"\n")
		})
	}
}

func TestGoldenGenerate(t *testing.T) {
	tests := []struct {
		name string
		opts GenerateOptions
	}{
		{"seed152-triadic", GenerateOptions{Seed: 152, Pattern: "triadic"}},
		{"seed180-triadic-playful-orbitron", GenerateOptions{Seed: 180, Pattern: "triadic", Mood: "playful", Font: "Orbitron", ShadowProfile: "dramatic", Radius: "rounded"}},
		{"seed30-goldenratio-luxury", GenerateOptions{Seed: 30, Pattern: "goldenRatio", Mood: "luxury"}},
		{"seed260-seedoflife-brutalist-chroma030", GenerateOptions{Seed: 260, Pattern: "seedOfLife", Mood: "brutalist", Chroma: chroma(0.3)}},
		{"seed0-monochromatic-zen-chroma0", GenerateOptions{Seed: 0, Pattern: "monochromatic", Mood: "zen", Chroma: chroma(0)}},
		{"seed95-vesicapiscis-editorial-serif", GenerateOptions{Seed: 95, Pattern: "vesicaPiscis", Mood: "editorial", Font: "Playfair Display", ShadowProfile: "subtle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, err := Generate(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "generate-"+tt.name+".css", th.CSS()+"\n")
		})
	}
}

// TestEveryThemePassesAA is the contrast property: every preset, and every
// pattern × mood over a sweep of hues and chromas, comes out of the engine
// with every text pair at WCAG AA in both modes, and every colour in gamut.
func TestEveryThemePassesAA(t *testing.T) {
	check := func(label string, th Theme) {
		t.Helper()
		for _, f := range th.ContrastFailures() {
			t.Errorf("%s: %s", label, f)
		}
		for _, m := range []Mode{th.Light, th.Dark} {
			for name, c := range m.Colors {
				if !c.InGamut() {
					t.Errorf("%s: %s %s %v out of gamut", label, m.Name, name, c)
				}
			}
		}
	}
	for _, p := range Presets() {
		th, err := Preset(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		check("preset "+p.Name, th)
	}
	hueStep := 15.0
	if testing.Short() {
		hueStep = 45
	}
	n := 0
	for _, pat := range Patterns() {
		for _, mood := range Moods() {
			for hue := 0.0; hue < 360; hue += hueStep {
				for _, c := range []float64{-1, 0, 0.05, 0.12, 0.2, 0.3, 0.4} {
					o := GenerateOptions{Seed: hue, Pattern: pat.Name, Mood: mood.Name}
					if c >= 0 {
						o.Chroma = chroma(c)
					}
					th, err := Generate(o)
					if err != nil {
						t.Fatal(err)
					}
					check(CommandLine(th.Request.Argv(false)), th)
					n++
				}
			}
		}
	}
	// The mood-derived path: a theme asked for by mood alone takes the
	// mood's pattern and a seed from its hue arc. Every seed the arc can
	// give, for every mood, passes.
	derived := 0
	for _, mood := range Moods() {
		for d := 0.0; d < mood.Hues.Span; d++ {
			o := GenerateOptions{Seed: mood.Hues.From + d, Pattern: mood.Pattern, Mood: mood.Name}
			th, err := Generate(o)
			if err != nil {
				t.Fatalf("mood %s: %v", mood.Name, err)
			}
			check("mood-derived "+CommandLine(th.Request.Argv(false)), th)
			derived++
		}
	}
	t.Logf("checked %d generated and %d mood-derived themes", n, derived)
}

// inArc reports whether hue h lies on the arc r.
func inArc(h float64, r HueRange) bool {
	return NormalizeHue(h-r.From) < r.Span
}

func TestMoodOptions(t *testing.T) {
	for _, m := range Moods() {
		t.Run(m.Name, func(t *testing.T) {
			if _, err := LookupPattern(m.Pattern); err != nil {
				t.Fatalf("default pattern: %v", err)
			}
			if m.Hues.Span < 1 || m.Hues.Span > 360 {
				t.Fatalf("hue span %v", m.Hues.Span)
			}
			seen := map[float64]bool{}
			for i := range 1000 {
				key := fmt.Sprintf("App %d|mood=%q", i, m.Name)
				o, err := MoodOptions(strings.ToUpper(m.Name), key)
				if err != nil {
					t.Fatal(err)
				}
				if o.Mood != m.Name || o.Pattern != m.Pattern || o.Chroma != nil || o.Font != "" || o.Radius != "" || o.ShadowProfile != "" {
					t.Fatalf("options %+v", o)
				}
				if o.Seed != math.Trunc(o.Seed) || !inArc(o.Seed, m.Hues) {
					t.Fatalf("seed %v for %q is not a whole degree on the arc %+v", o.Seed, key, m.Hues)
				}
				again, _ := MoodOptions(m.Name, key)
				if again.Seed != o.Seed {
					t.Fatalf("key %q gave seeds %v and %v", key, o.Seed, again.Seed)
				}
				seen[o.Seed] = true
			}
			// 1000 keys land on most of the arc's whole degrees, not a few.
			if want := min(m.Hues.Span, 360) * 0.9; float64(len(seen)) < want {
				t.Errorf("1000 keys gave %d distinct seeds on a %v° arc", len(seen), m.Hues.Span)
			}
		})
	}
	o, err := MoodOptions("", "k")
	if err != nil || o.Mood != DefaultMood {
		t.Errorf("empty mood: %+v, %v", o, err)
	}
	var une *UnknownNameError
	if _, err := MoodOptions("grumpy", "k"); !errors.As(err, &une) || une.Kind != "mood" {
		t.Errorf("unknown mood: %v", err)
	}
}

func TestHugeSeedStaysFinite(t *testing.T) {
	for _, seed := range []float64{1e300, -1e300, math.MaxFloat64} {
		th, err := Generate(GenerateOptions{Seed: seed, Pattern: "triadic"})
		if err != nil {
			t.Fatalf("seed %v: %v", seed, err)
		}
		if s := th.Request.Generate.Seed; s < 0 || s >= 360 {
			t.Errorf("seed %v normalised to %v", seed, s)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := Generate(GenerateOptions{Seed: 152, Pattern: "triadic", Mood: "retro"})
	b, _ := Generate(GenerateOptions{Seed: 152 + 720, Pattern: "Triadic", Mood: "RETRO"})
	if a.CSS() != b.CSS() {
		t.Error("same request spelled differently gave different CSS")
	}
}

func TestRegistries(t *testing.T) {
	count := map[string]int{
		"patterns":        len(Patterns()),
		"moods":           len(Moods()),
		"presets":         len(Presets()),
		"shadow profiles": len(ShadowProfiles()),
		"radius stops":    len(RadiusStops()),
	}
	want := map[string]int{"patterns": 11, "moods": 12, "presets": 12, "shadow profiles": 5, "radius stops": 5}
	if !cmp.Equal(count, want) {
		t.Errorf("registry sizes %v, want %v", count, want)
	}
	if n := len(CuratedFonts()); n < 18 {
		t.Errorf("%d curated fonts, want about 20", n)
	}
	for _, m := range Moods() {
		for _, f := range []string{m.Fonts.Sans, m.Fonts.Serif, m.Fonts.Mono} {
			if _, err := LookupFont(f); err != nil {
				t.Errorf("mood %s: %v", m.Name, err)
			}
		}
		if _, err := LookupRadius(m.Radius); err != nil {
			t.Errorf("mood %s: %v", m.Name, err)
		}
		if _, err := LookupShadowProfile(m.Shadow); err != nil {
			t.Errorf("mood %s: %v", m.Name, err)
		}
	}
	// Preset mood names must not collide with preset names: a plan's mood
	// prop names either.
	for _, p := range Presets() {
		if _, err := LookupMood(p.Name); err == nil {
			t.Errorf("preset %s has the name of a mood", p.Name)
		}
	}
	for _, p := range Patterns() {
		if len(p.Offsets) == 0 || p.Offsets[0] != 0 {
			t.Errorf("pattern %s must start at offset 0", p.Name)
		}
	}
}

func TestUnknownNames(t *testing.T) {
	tests := []struct {
		req       Request
		kind      string
		mentioned string
	}{
		{Request{Preset: "vaporwave"}, "preset", "cyberpunk"},
		{Request{Generate: GenerateOptions{Seed: 1, Pattern: "pentagonal"}}, "pattern", "seedOfLife"},
		{Request{Generate: GenerateOptions{Seed: 1, Pattern: "triadic", Mood: "grumpy"}}, "mood", "fashion-editorial"},
		{Request{Generate: GenerateOptions{Seed: 1, Pattern: "triadic", Font: "Comic Sans"}}, "font", "JetBrains Mono"},
		{Request{Generate: GenerateOptions{Seed: 1, Pattern: "triadic", ShadowProfile: "huge"}}, "shadow profile", "dramatic"},
		{Request{Generate: GenerateOptions{Seed: 1, Pattern: "triadic", Radius: "blob"}}, "radius", "pill"},
	}
	for _, tt := range tests {
		_, err := Build(tt.req)
		var une *UnknownNameError
		if !errors.As(err, &une) || une.Kind != tt.kind {
			t.Errorf("%+v: got %v, want unknown %s", tt.req, err, tt.kind)
			continue
		}
		if !strings.Contains(err.Error(), tt.mentioned) {
			t.Errorf("error %q does not list valid name %q", err, tt.mentioned)
		}
	}
	if _, err := Generate(GenerateOptions{Seed: 1, Pattern: "triadic", Chroma: chroma(0.9)}); err == nil {
		t.Error("chroma 0.9 accepted")
	}
	if _, err := Generate(GenerateOptions{Seed: 1}); err == nil {
		t.Error("missing pattern accepted")
	}
}

func TestArgv(t *testing.T) {
	tests := []struct {
		req  Request
		want string
	}{
		{Request{Generate: GenerateOptions{Seed: 152, Pattern: "triadic"}}, "theme generate --seed 152 --pattern triadic --apply"},
		{Request{Preset: "cyberpunk"}, "theme preset cyberpunk --apply"},
		{Request{Preset: "cyberpunk", ShiftHue: 30}, "theme preset cyberpunk --shift-hue 30 --apply"},
		{Request{Generate: GenerateOptions{Seed: 180, Pattern: "triadic", Mood: "playful", Chroma: chroma(0.2), Font: "DM Sans", ShadowProfile: "dramatic", Radius: "rounded"}},
			"theme generate --seed 180 --pattern triadic --mood playful --chroma 0.2 --font 'DM Sans' --shadow-profile dramatic --radius rounded --apply"},
	}
	for _, tt := range tests {
		th, err := Build(tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := CommandLine(th.Request.Argv(true)); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	// A font name stays one argument whatever it holds.
	argv := Request{Generate: GenerateOptions{Seed: 1, Pattern: "triadic", Font: `a"; rm -rf / #`}}.Argv(false)
	if argv[len(argv)-1] != `a"; rm -rf / #` {
		t.Errorf("font split or altered: %q", argv)
	}
	if got, want := CommandLine([]string{"it's"}), `'it'\''s'`; got != want {
		t.Errorf("CommandLine quoting: got %s, want %s", got, want)
	}
}

func TestShiftHue(t *testing.T) {
	base, _ := Generate(GenerateOptions{Seed: 100, Pattern: "analogous"})
	shifted, err := Build(Request{Generate: base.Request.Generate, ShiftHue: 52})
	if err != nil {
		t.Fatal(err)
	}
	if shifted.Request.Generate.Seed != 152 {
		t.Errorf("shifted seed %v, want 152", shifted.Request.Generate.Seed)
	}
	p, _ := Build(Request{Preset: "tangerine", ShiftHue: -60})
	if p.Request.ShiftHue != 300 {
		t.Errorf("preset shift normalised to %v, want 300", p.Request.ShiftHue)
	}
	plain, _ := Preset("tangerine")
	if p.Light.Colors["primary"].H == plain.Light.Colors["primary"].H {
		t.Error("shift did not move the primary hue")
	}
}

func TestFontQuotedAsData(t *testing.T) {
	evil := `Evil"; } body { display: none } /* ralph:theme:end */ $(rm -rf ~)`
	th, _ := Preset("mono")
	th.Light.Fonts.Sans = evil
	th.Dark.Fonts.Sans = evil
	css := th.CSS()
	if strings.Count(css, EndMarker) != 1 || strings.Count(css, StartMarker) != 1 {
		t.Fatal("font value produced an extra marker")
	}
	if missing := CheckCSS([]byte(css)); len(missing) != 0 {
		t.Fatalf("font value broke the declarations: missing %v", missing)
	}
	want := `--font-sans: "Evil\"; } body { display: none } \/* ralph:theme:end *\/ $(rm -rf ~)", ui-sans-serif`
	if !strings.Contains(css, want) {
		t.Errorf("font not quoted as one CSS string; want %s in\n%s", want, css)
	}
	if got := cssString("a\nb\\c"); got != `"a\a b\\c"` {
		t.Errorf("cssString escapes: %s", got)
	}
}

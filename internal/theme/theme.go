package theme

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxChroma is the largest chroma a request may ask for; sRGB colours
// never exceed about 0.37.
const MaxChroma = 0.4

// DefaultMood is the mood a generated theme uses when none is named.
const DefaultMood = "minimal"

// GenerateOptions asks for a theme built from a seed hue and a harmony
// pattern. Empty fields take the mood's defaults.
type GenerateOptions struct {
	Seed          float64  `json:"seed"`                    // hue in degrees; any value, taken modulo 360
	Pattern       string   `json:"pattern"`                 // a Patterns name
	Mood          string   `json:"mood,omitempty"`          // a Moods name; "" means DefaultMood
	Chroma        *float64 `json:"chroma,omitempty"`        // nil keeps the mood's chroma; 0 gives greys
	Font          string   `json:"font,omitempty"`          // a CuratedFonts name; becomes font-sans and its own slot
	ShadowProfile string   `json:"shadowProfile,omitempty"` // a ShadowProfiles name
	Radius        string   `json:"radius,omitempty"`        // a RadiusStops name
}

// Request is what to build: a named preset, or generate options, and a hue
// rotation applied on top (what `ralph theme modify --shift-hue` adds up).
type Request struct {
	Preset   string          `json:"preset,omitempty"`
	Generate GenerateOptions `json:"generate,omitzero"`
	ShiftHue float64         `json:"shiftHue,omitempty"`
}

// Theme is a complete, contrast-checked token set.
type Theme struct {
	Request     Request
	Light, Dark Mode
	// Adjustments lists the lightness changes made so that every text pair
	// passes AA contrast, light mode first.
	Adjustments []Adjustment
}

// Generate builds a theme from a seed hue, a pattern and a mood.
func Generate(o GenerateOptions) (Theme, error) {
	return Build(Request{Generate: o})
}

// Preset builds the named preset.
func Preset(name string) (Theme, error) {
	return Build(Request{Preset: name})
}

// Build builds the theme r asks for. Unknown names are *UnknownNameError.
func Build(r Request) (Theme, error) {
	s, r, err := resolve(r)
	if err != nil {
		return Theme{}, err
	}
	s.shift(r.ShiftHue)
	light, la := buildMode(s, false)
	dark, da := buildMode(s, true)
	return Theme{Request: r, Light: light, Dark: dark, Adjustments: append(la, da...)}, nil
}

// resolve turns a request into a spec, returning the request with names in
// their canonical spelling.
func resolve(r Request) (spec, Request, error) {
	if r.Preset != "" {
		p, err := lookupPreset(r.Preset)
		if err != nil {
			return spec{}, r, err
		}
		s, _, err := resolveOptions(p.Options)
		if err != nil {
			return spec{}, r, fmt.Errorf("preset %s: %w", p.Name, err)
		}
		if p.tweak != nil {
			p.tweak(&s)
		}
		return s, Request{Preset: p.Name, ShiftHue: roundHue(r.ShiftHue)}, nil
	}
	o := r.Generate
	o.Seed = roundHue(o.Seed + r.ShiftHue)
	s, o, err := resolveOptions(o)
	return s, Request{Generate: o}, err
}

func resolveOptions(o GenerateOptions) (spec, GenerateOptions, error) {
	if math.IsNaN(o.Seed) || math.IsInf(o.Seed, 0) {
		return spec{}, o, errors.New("seed hue must be a finite number of degrees")
	}
	if o.Pattern == "" {
		return spec{}, o, errors.New("a pattern is required")
	}
	pat, err := LookupPattern(o.Pattern)
	if err != nil {
		return spec{}, o, err
	}
	o.Pattern = pat.Name
	moodName := o.Mood
	if moodName == "" {
		moodName = DefaultMood
	}
	mood, err := LookupMood(moodName)
	if err != nil {
		return spec{}, o, err
	}
	if o.Mood != "" {
		o.Mood = mood.Name
	}
	s := spec{
		hues:          pat.Hues(o.Seed),
		chroma:        mood.Chroma,
		neutralChroma: mood.NeutralChroma,
		neutralHue:    NormalizeHue(o.Seed),
		light:         mood.Light,
		dark:          mood.Dark,
		fonts:         mood.Fonts,
	}
	if o.Chroma != nil {
		ch := *o.Chroma
		if math.IsNaN(ch) || ch < 0 || ch > MaxChroma {
			return spec{}, o, fmt.Errorf("chroma %v out of range [0, %v]", ch, MaxChroma)
		}
		s.chroma = ch
		// Surfaces follow the palette: a grey palette gets grey surfaces.
		s.neutralChroma = min(s.neutralChroma, ch/4)
	}
	radius := mood.Radius
	if o.Radius != "" {
		radius = o.Radius
	}
	if s.radius, err = LookupRadius(radius); err != nil {
		return spec{}, o, err
	}
	if o.Radius != "" {
		o.Radius = s.radius.Name
	}
	shadow := mood.Shadow
	if o.ShadowProfile != "" {
		shadow = o.ShadowProfile
	}
	if s.shadow, err = LookupShadowProfile(shadow); err != nil {
		return spec{}, o, err
	}
	if o.ShadowProfile != "" {
		o.ShadowProfile = s.shadow.Name
	}
	if o.Font != "" {
		f, err := LookupFont(o.Font)
		if err != nil {
			return spec{}, o, err
		}
		o.Font = f.Name
		s.fonts.Sans = f.Name
		switch f.Category {
		case Serif:
			s.fonts.Serif = f.Name
		case Mono:
			s.fonts.Mono = f.Name
		}
	}
	return s, o, nil
}

// roundHue normalises a hue and rounds it to a tenth of a degree, so that
// requests compare and print the same way every time. It normalises first,
// so that a seed of any finite size stays finite.
func roundHue(h float64) float64 {
	return NormalizeHue(math.Round(NormalizeHue(h)*10) / 10)
}

// Title names the theme for people: `preset "cyberpunk"`, `generated
// theme`, with the hue shift when there is one.
func (t Theme) Title() string {
	title := "generated theme"
	if t.Request.Preset != "" {
		title = fmt.Sprintf("preset %q", t.Request.Preset)
	}
	if t.Request.ShiftHue != 0 {
		title += " shifted by " + formatNumber(t.Request.ShiftHue) + "°"
	}
	return title
}

// ContrastFailures returns the text pairs of t below AA contrast. A theme
// from Build has none; the check is for themes edited by hand.
func (t Theme) ContrastFailures() []ContrastFailure {
	return append(checkContrast("light", t.Light.Colors), checkContrast("dark", t.Dark.Colors)...)
}

// Argv returns the ralph command line, without the leading "ralph", that
// builds r: for example [theme generate --seed 152 --pattern triadic
// --apply]. With apply false it leaves off --apply. Each value is one
// element, so a font name with spaces or quotes stays one argument.
func (r Request) Argv(apply bool) []string {
	var argv []string
	if r.Preset != "" {
		argv = []string{"theme", "preset", r.Preset}
		if r.ShiftHue != 0 {
			argv = append(argv, "--shift-hue", formatNumber(r.ShiftHue))
		}
	} else {
		o := r.Generate
		argv = []string{"theme", "generate", "--seed", formatNumber(roundHue(o.Seed + r.ShiftHue)), "--pattern", o.Pattern}
		if o.Mood != "" {
			argv = append(argv, "--mood", o.Mood)
		}
		if o.Chroma != nil {
			argv = append(argv, "--chroma", formatNumber(*o.Chroma))
		}
		if o.Font != "" {
			argv = append(argv, "--font", o.Font)
		}
		if o.ShadowProfile != "" {
			argv = append(argv, "--shadow-profile", o.ShadowProfile)
		}
		if o.Radius != "" {
			argv = append(argv, "--radius", o.Radius)
		}
	}
	if apply {
		argv = append(argv, "--apply")
	}
	return argv
}

// CommandLine renders argv for display, quoting any argument a POSIX shell
// would split or expand. It is for people to read; ralph never runs it
// through a shell.
func CommandLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/=+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func formatNumber(x float64) string {
	return strconv.FormatFloat(x, 'f', -1, 64)
}

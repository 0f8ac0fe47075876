package cli

import (
	"context"
	"fmt"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/theme"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/spf13/cobra"
)

// ThemeOptions are the flags every theme subcommand that writes shares.
type ThemeOptions struct {
	// Stylesheet is where --apply writes, relative to the workspace
	// directory unless absolute; empty means ralph.toml's [theme]
	// stylesheet, whose default is src/index.css.
	Stylesheet string
	// Apply writes the theme into Stylesheet instead of printing the CSS.
	Apply bool
}

// AddFlags registers the shared flags on cmd.
func (o *ThemeOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.Apply, "apply", false, "write the theme into the stylesheet instead of printing it")
	cmd.Flags().StringVar(&o.Stylesheet, "stylesheet", "", "`PATH` of the stylesheet to write, relative to the workspace (default: [theme] stylesheet in ralph.toml, else "+theme.DefaultStylesheet+")")
}

// ThemeGenerateOptions are the flags of `ralph theme generate`.
type ThemeGenerateOptions struct {
	ThemeOptions
	Seed          float64
	Pattern       string
	Mood          string
	Chroma        float64
	Font          string
	ShadowProfile string
	Radius        string
}

// AddFlags registers the generate flags on cmd.
func (o *ThemeGenerateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&o.Seed, "seed", 0, "seed hue in `DEGREES` (0-360)")
	f.StringVar(&o.Pattern, "pattern", "", "harmony `PATTERN` (see ralph theme list)")
	f.StringVar(&o.Mood, "mood", "", "`MOOD` (default "+theme.DefaultMood+")")
	f.Float64Var(&o.Chroma, "chroma", 0, fmt.Sprintf("palette chroma `C`, 0 to %v (default: the mood's)", theme.MaxChroma))
	f.StringVar(&o.Font, "font", "", "curated `FONT` for the body text")
	f.StringVar(&o.ShadowProfile, "shadow-profile", "", "shadow `PROFILE` (default: the mood's)")
	f.StringVar(&o.Radius, "radius", "", "radius `STOP` (default: the mood's)")
	o.ThemeOptions.AddFlags(cmd)
}

// ThemePresetOptions are the flags of `ralph theme preset`.
type ThemePresetOptions struct {
	ThemeOptions
	ShiftHue float64
}

// ThemeModifyOptions are the flags of `ralph theme modify`.
type ThemeModifyOptions struct {
	ThemeOptions
	ShiftHue float64
}

func newThemeCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "theme",
		Short: "Generate an OKLCH design-token theme and write it into the stylesheet",
		Long: `theme builds a complete light and dark set of shadcn/ui design tokens in
OKLCH — colours, fonts, radius and shadows — checks every text colour
against WCAG AA contrast, and writes it between the
/* ralph:theme:start */ and /* ralph:theme:end */ markers of the project
stylesheet (default ` + theme.DefaultStylesheet + `), leaving the rest of the file as it was.`,
	}
	cmd.AddCommand(
		newThemeListCommand(g),
		newThemePresetCommand(g),
		newThemeGenerateCommand(g),
		newThemeModifyCommand(g),
	)
	return cmd
}

func newThemeListCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List moods, presets, patterns, fonts, shadow profiles and radius stops",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return theme.WriteCatalog(g.Stdout)
		},
	}
}

func newThemePresetCommand(g *Globals) *cobra.Command {
	var opts ThemePresetOptions
	cmd := &cobra.Command{
		Use:   "preset NAME",
		Short: "Print or apply a named preset",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runThemeRequest(cmd.Context(), g, opts.ThemeOptions, theme.Request{Preset: args[0], ShiftHue: opts.ShiftHue}, false)
		},
	}
	cmd.Flags().Float64Var(&opts.ShiftHue, "shift-hue", 0, "rotate every hue by `DEGREES`")
	opts.ThemeOptions.AddFlags(cmd)
	return cmd
}

func newThemeGenerateCommand(g *Globals) *cobra.Command {
	var opts ThemeGenerateOptions
	cmd := &cobra.Command{
		Use:   "generate --seed DEGREES --pattern PATTERN",
		Short: "Print or apply a theme generated from a seed hue and a harmony pattern",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := theme.GenerateOptions{
				Seed: opts.Seed, Pattern: opts.Pattern, Mood: opts.Mood, Font: opts.Font,
				ShadowProfile: opts.ShadowProfile, Radius: opts.Radius,
			}
			if cmd.Flags().Changed("chroma") {
				c := opts.Chroma
				o.Chroma = &c
			}
			return runThemeRequest(cmd.Context(), g, opts.ThemeOptions, theme.Request{Generate: o}, false)
		},
	}
	opts.AddFlags(cmd)
	cmd.MarkFlagRequired("seed")
	cmd.MarkFlagRequired("pattern")
	return cmd
}

func newThemeModifyCommand(g *Globals) *cobra.Command {
	var opts ThemeModifyOptions
	cmd := &cobra.Command{
		Use:   "modify --shift-hue DEGREES",
		Short: "Rotate the hues of the last applied theme",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runThemeModify(cmd.Context(), g, opts)
		},
	}
	cmd.Flags().Float64Var(&opts.ShiftHue, "shift-hue", 0, "rotate every hue by `DEGREES`")
	cmd.MarkFlagRequired("shift-hue")
	opts.ThemeOptions.AddFlags(cmd)
	return cmd
}

// runThemeModify rebuilds the recorded theme with its hues rotated. It
// writes to the stylesheet the theme was applied to unless told otherwise.
func runThemeModify(ctx context.Context, g *Globals, opts ThemeModifyOptions) error {
	req, sheet, err := theme.Modified(themeRoot(ctx, g), opts.ShiftHue)
	if err != nil {
		return err
	}
	if opts.Stylesheet == "" {
		opts.Stylesheet = sheet
	}
	return runThemeRequest(ctx, g, opts.ThemeOptions, req, true)
}

// runThemeRequest builds req and either prints its CSS or applies it and
// records it as the workspace's theme. showCommand adds the equivalent
// command line to the report, for requests the user did not type.
func runThemeRequest(ctx context.Context, g *Globals, opts ThemeOptions, req theme.Request, showCommand bool) error {
	if !opts.Apply {
		return theme.Preview(g.Stdout, g.Stderr, req)
	}
	root := themeRoot(ctx, g)
	if opts.Stylesheet == "" {
		cfg, err := config.Load(root)
		if err != nil {
			return usageError(err)
		}
		opts.Stylesheet = cfg.Theme.Stylesheet
	}
	res, err := theme.ApplyRequest(root, opts.Stylesheet, req)
	if err != nil {
		return err
	}
	if showCommand {
		fmt.Fprintf(g.Stdout, "Command: %s\n", res.Command)
	}
	fmt.Fprint(g.Stdout, res.Output)
	return nil
}

// themeRoot is where themes are applied and recorded: the git working
// tree's top directory, as for ralph run, or the directory itself outside
// git (a stylesheet need not live in a repository).
func themeRoot(ctx context.Context, g *Globals) string {
	if ws, err := workspace.Open(ctx, g.Dir); err == nil {
		return ws.Root
	}
	return g.Dir
}

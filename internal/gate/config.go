package gate

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/ralph-harness/ralph/internal/config"
)

// FromConfig returns the gates of a run: the built-in gates, then the
// command gates of ralph.toml.
func FromConfig(cfg config.Config, logger *slog.Logger) []Gate {
	gates := []Gate{
		HasSummary{},
		&PlanDiff{},
		&AppHasContent{},
	}
	build := buildSucceeds(cfg.Build, logger)
	ui := &UIRenders{Build: build, Logger: logger}
	if u := cfg.UI; u != nil {
		ui.OptIn, ui.Off, ui.Browser, ui.Required = true, u.Off, u.Browser, u.Required
	}
	build.KeepBundle = !ui.Off
	gates = append(gates, build, &CSSThemeComplete{Stylesheet: cfg.Theme.Stylesheet}, ui)
	for _, g := range cfg.Gates {
		gates = append(gates, &Command{GateName: g.Name, Argv: g.Run, Dir: g.Dir, Timeout: g.Timeout.Duration, Optional: g.Optional})
	}
	return gates
}

// buildSucceeds configures the build-succeeds gate from [gates.build];
// without the table it runs for App plans only.
func buildSucceeds(b *config.BuildGate, logger *slog.Logger) *BuildSucceeds {
	if b == nil {
		return &BuildSucceeds{Logger: logger}
	}
	return &BuildSucceeds{OptIn: true, Use: b.Use, Entry: b.Entry, Missing: b.Missing,
		Tsconfig: b.Tsconfig, Timeout: b.Timeout.Duration, Logger: logger}
}

// ForSpecs returns the configured gates: the command gates of ralph.toml,
// and build-succeeds when [gates.build] opts the project in. The other
// built-in gates of ralph run (has-summary, the plan and theme gates)
// check its .ralph/ protocol, which the spec pipeline does not use.
func ForSpecs(cfg config.Config) []Gate {
	var out []Gate
	for _, g := range FromConfig(cfg, nil) {
		switch g := g.(type) {
		case *Command:
			out = append(out, g)
		case *BuildSucceeds:
			if g.OptIn {
				out = append(out, g)
			}
		case *UIRenders:
			if g.OptIn {
				out = append(out, g)
			}
		}
	}
	return out
}

// Close ends what the gates hold for a run (ui-renders's browser).
func Close(gates []Gate) {
	for _, g := range gates {
		if c, ok := g.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

// Landing runs the spec gates on a rebased branch for the merge
// queue: "" when they pass, else the failed gates on the first line and
// their feedback below.
func Landing(gates []Gate) func(ctx context.Context, dir string) (string, error) {
	return func(ctx context.Context, dir string) (string, error) {
		results := RunAll(ctx, gates, Env{Root: dir})
		if err := ctx.Err(); err != nil {
			return "", err
		}
		failed := Failed(results)
		if len(failed) == 0 {
			return "", nil
		}
		names := make([]string, len(failed))
		for i, f := range failed {
			names[i] = f.Gate
		}
		return strings.Join(names, ", ") + "\n\n" + Feedback(results), nil
	}
}

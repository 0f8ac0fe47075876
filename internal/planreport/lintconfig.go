package planreport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
)

// LintConfig checks what a run is configured with and what plans are
// checked against (ralph plan lint-config): ralph.toml, its command gates'
// programs, the recipe folders and the registries built from them. It
// prints one line for each, "ok", "WARN" or "FAIL", and a failure makes
// it a failure.Failed error.
func LintConfig(ctx context.Context, g *Globals) error {
	fails := 0
	line := func(status, format string, args ...any) {
		if status == "FAIL" {
			fails++
		}
		fmt.Fprintf(g.Stdout, "%-4s %s\n", status, fmt.Sprintf(format, args...))
	}

	cfg, err := config.Load(g.Dir)
	switch {
	case err != nil:
		line("FAIL", "%s: %v", config.FileName, err)
	default:
		if _, serr := os.Stat(filepath.Join(g.Dir, config.FileName)); errors.Is(serr, fs.ErrNotExist) {
			line("ok", "%s: none, the defaults apply (ralph init writes one)", config.FileName)
		} else {
			line("ok", "%s: agent %s, %s, task parser %s", config.FileName, cmp.Or(string(cfg.Agent), "auto"),
				plural(len(cfg.Gates), "command gate"), cmp.Or(cfg.Task.Parser, "auto"))
		}
		for _, gt := range cfg.Gates {
			if len(gt.Run) == 0 {
				line("FAIL", "gate %q: run is empty", gt.Name)
				continue
			}
			if _, err := lookPath(g.Dir, gt.Dir, gt.Run[0]); err != nil {
				line("WARN", "gate %q: program %s not found (%v)", gt.Name, gt.Run[0], err)
			}
		}
	}

	dirs := append([]string{filepath.Join(g.Dir, filepath.FromSlash(recipe.ProjectDir))}, cfg.RecipeDirs...)
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(g.Dir, d)
		}
		switch fi, err := os.Stat(d); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			line("FAIL", "recipe folder %s: %v", d, err)
		case !fi.IsDir():
			line("FAIL", "recipe folder %s is not a directory", d)
		}
	}
	lib, err := recipe.Load(ctx, g.Dir)
	if err != nil {
		line("FAIL", "recipes: %v", err)
		if lib, err = recipe.Embedded(); err != nil {
			return err
		}
	} else {
		embedded := 0
		for _, r := range lib.List() {
			if r.Source == recipe.SourceEmbedded {
				embedded++
			}
		}
		line("ok", "recipes: %d (%d embedded, %d from recipe folders)", len(lib.IDs()), embedded, len(lib.IDs())-embedded)
	}

	reg := plancontext.Registries(lib)
	line("ok", "registries: %s, %s, %s, %s, %s", plural(len(reg.Recipes), "recipe id"), plural(len(reg.Moods), "mood"),
		plural(len(reg.Presets), "preset"), plural(len(reg.Patterns), "pattern"), plural(len(reg.Fonts), "font"))
	if missing := missingNames(reg); len(missing) > 0 {
		line("FAIL", "registries: empty %s", strings.Join(missing, ", "))
	}
	if fails > 0 {
		return failure.New(failure.Failed, nil)
	}
	return nil
}

// missingNames lists the registries a plan cannot be checked without that
// are empty.
func missingNames(r plan.Registries) []string {
	var out []string
	for _, c := range []struct {
		name string
		n    int
	}{{"recipes", len(r.Recipes)}, {"moods", len(r.Moods)}, {"presets", len(r.Presets)}} {
		if c.n == 0 {
			out = append(out, c.name)
		}
	}
	return out
}

// lookPath finds a gate's program as the gate will run it: a path with a
// slash relative to the gate's directory, else on PATH.
func lookPath(root, dir, program string) (string, error) {
	if strings.Contains(program, "/") && !filepath.IsAbs(program) {
		program = filepath.Join(root, dir, program)
	}
	return exec.LookPath(program)
}

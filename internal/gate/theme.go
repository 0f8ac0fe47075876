package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/theme"
)

// CSSThemeComplete is the css-theme-complete gate (SPEC §9): every theme
// token (theme.Tokens) is declared for light mode in :root and for dark
// mode in .dark in the project stylesheet, as theme.CheckCSS reads it.
//
// A project without a theme is not failed for lacking one: when no theme
// is expected and the stylesheet is missing or declares no theme token at
// all, the gate skips. A theme is expected when Expected says so.
type CSSThemeComplete struct {
	// Stylesheet is the stylesheet, relative to the workspace root unless
	// absolute; "" means theme.DefaultStylesheet.
	Stylesheet string
	// Expected reports whether the project should have a theme; nil
	// expects one when .ralph/plan.tsx has a <Theme> or a theme has been
	// applied (theme.RecordFile exists).
	Expected func() bool
}

// cssMissingListMax bounds how many missing tokens the message lists.
const cssMissingListMax = 24

// Name returns "css-theme-complete".
func (*CSSThemeComplete) Name() string { return "css-theme-complete" }

// MayWriteTree reports false: the gate only reads, in ralph's process.
func (*CSSThemeComplete) MayWriteTree(Env) bool { return false }

// Check reads the stylesheet and looks for every token in both modes.
func (g *CSSThemeComplete) Check(ctx context.Context, env Env) Result {
	rel := g.Stylesheet
	if rel == "" {
		rel = theme.DefaultStylesheet
	}
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Root, path)
	}
	css, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{Status: Fail, Message: fmt.Sprintf("cannot read the stylesheet %s: %v", rel, err),
			Fix: fmt.Sprintf("Make %s a readable file holding the theme.", rel)}
	}
	if err != nil {
		if !g.expected(env) {
			return Result{Status: Skip, Message: "no theme in this project"}
		}
		return Result{Status: Fail,
			Message: fmt.Sprintf("the plan has a <Theme> but the stylesheet %s does not exist", rel),
			Fix:     fmt.Sprintf("Apply the theme once with `ralph theme preset NAME --apply` or `ralph theme generate --seed HUE --pattern PATTERN --apply` (it writes %s), and make sure the app imports that stylesheet.", rel)}
	}
	missing := theme.CheckCSS(css)
	if len(missing) == 0 {
		return Result{Status: Pass, Message: fmt.Sprintf("all %d theme tokens present for light and dark in %s", len(theme.Tokens()), rel)}
	}
	if len(missing) == 2*len(theme.Tokens()) && !g.expected(env) {
		return Result{Status: Skip, Message: fmt.Sprintf("no theme in this project (%s declares no theme tokens)", rel)}
	}
	light, dark := 0, 0
	for _, m := range missing {
		if strings.HasPrefix(m, ".dark") {
			dark++
		} else {
			light++
		}
	}
	shown := missing
	more := ""
	if len(shown) > cssMissingListMax {
		shown = shown[:cssMissingListMax]
		more = fmt.Sprintf(", … and %d more", len(missing)-cssMissingListMax)
	}
	fix := "Restore the theme block: run `ralph theme modify --shift-hue 0 --apply` to rewrite it from the recorded theme (or apply one with `ralph theme preset NAME --apply`). Do not delete or hand-edit tokens between " + theme.StartMarker + " and " + theme.EndMarker + "; override them in your own rules after the block instead."
	return Result{Status: Fail,
		Message: fmt.Sprintf("%s is missing %d theme tokens (%d in light :root, %d in dark .dark): %s%s",
			rel, len(missing), light, dark, strings.Join(shown, ", "), more),
		Fix: fix}
}

// expected reports whether a theme should be there.
func (g *CSSThemeComplete) expected(env Env) bool {
	if g.Expected != nil {
		return g.Expected()
	}
	if _, err := os.Stat(filepath.Join(env.Root, filepath.FromSlash(theme.RecordFile))); err == nil {
		return true
	}
	root, err := currentPlan(env.Root, nil)
	return err == nil && plan.Theme(root) != nil
}

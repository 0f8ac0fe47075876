package theme

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// Applied is what ApplyRequest did, in the form the PLAN → BUILD
// transition records in the build instructions.
type Applied struct {
	Theme      Theme
	Stylesheet string // as given, relative to the workspace unless absolute
	Vars       int    // custom properties written
	Command    string // the equivalent command line, e.g. "ralph theme preset cyberpunk --apply"
	Output     string // what `ralph <Command>` prints
}

// ApplyRequest builds r, writes it into stylesheet (relative to dir unless
// absolute; "" means DefaultStylesheet) and records it in dir's
// RecordFile, so `ralph theme modify` can start from it. The harness and
// the `ralph theme` command both apply themes through it, so they report
// the same way.
func ApplyRequest(dir, stylesheet string, r Request) (Applied, error) {
	t, err := Build(r)
	if err != nil {
		return Applied{}, err
	}
	if stylesheet == "" {
		stylesheet = DefaultStylesheet
	}
	path, err := workspace.Inside(dir, stylesheet)
	if err != nil {
		return Applied{}, fmt.Errorf("stylesheet %w", err)
	}
	n, err := Apply(path, t)
	if err != nil {
		return Applied{}, err
	}
	rec := Record{Request: t.Request, Stylesheet: stylesheet, Vars: n}
	if err := SaveRecord(filepath.Join(dir, RecordFile), rec); err != nil {
		return Applied{}, err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Applied %s (%d vars) to %s\n", t.Title(), n, stylesheet)
	for _, a := range t.Adjustments {
		fmt.Fprintf(&out, "Contrast: %s\n", a)
	}
	return Applied{
		Theme:      t,
		Stylesheet: stylesheet,
		Vars:       n,
		Command:    "ralph " + CommandLine(t.Request.Argv(true)),
		Output:     out.String(),
	}, nil
}

// Preview writes the CSS req builds to w, and each contrast adjustment it
// made to warn, without applying it.
func Preview(w, warn io.Writer, req Request) error {
	t, err := Build(req)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, t.CSS())
	for _, a := range t.Adjustments {
		fmt.Fprintf(warn, "contrast: %s\n", a)
	}
	return nil
}

// Modified is the theme recorded in root with its hues rotated by shift,
// and the stylesheet it was applied to.
func Modified(root string, shift float64) (Request, string, error) {
	rec, err := LoadRecord(filepath.Join(root, RecordFile))
	if errors.Is(err, ErrNoRecord) {
		return Request{}, "", errors.New("no theme applied yet: run `ralph theme preset NAME --apply` or `ralph theme generate ... --apply` first")
	}
	if err != nil {
		return Request{}, "", err
	}
	req := rec.Request
	req.ShiftHue += shift
	return req, rec.Stylesheet, nil
}

package theme

import (
	"fmt"
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

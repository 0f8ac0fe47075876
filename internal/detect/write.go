package detect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Written is what WriteConfig did to ralph.toml.
type Written struct {
	// Created is set when ralph.toml was written from config.Template.
	Created bool
	// Gates are the checks written as [[gates]]; none when ralph.toml
	// already had gates, or none were found.
	Gates []Check
	// Existing counts the [[gates]] ralph.toml already had; it is then
	// left as it was.
	Existing int
	// Skipped is set when detection was turned off (ralph init
	// --no-detect).
	Skipped bool
}

// String says what was written, one line, then a line per gate.
func (w Written) String() string {
	var b strings.Builder
	verb := "kept"
	if w.Created {
		verb = "created"
	}
	switch {
	case w.Existing > 0:
		fmt.Fprintf(&b, "kept %s: it has %s already\n", config.FileName, countGates(w.Existing))
	case len(w.Gates) > 0:
		if w.Created {
			fmt.Fprintf(&b, "created %s with %s from this project's own checks:\n", config.FileName, countGates(len(w.Gates)))
		} else {
			fmt.Fprintf(&b, "added %s to %s from this project's own checks:\n", countGates(len(w.Gates)), config.FileName)
		}
		name, cmd := 0, 0
		for _, g := range w.Gates {
			name, cmd = max(name, len(g.Name)), max(cmd, len(g.Command()))
		}
		for _, g := range w.Gates {
			fmt.Fprintf(&b, "  %-*s  %-*s  (%s)\n", name, g.Name, cmd, g.Command(), g.From)
		}
	case w.Skipped:
		fmt.Fprintf(&b, "%s %s with no gates (--no-detect): add [[gates]] for the checks a task's work must pass\n", verb, config.FileName)
	default:
		fmt.Fprintf(&b, "%s %s with no gates: found no go.mod, package.json scripts, pyproject.toml, pytest.ini, Cargo.toml or Makefile test target; add [[gates]] for the checks a task's work must pass, or a completion rests on the agent's word\n", verb, config.FileName)
	}
	return b.String()
}

func countGates(n int) string {
	if n == 1 {
		return "1 gate"
	}
	return fmt.Sprintf("%d gates", n)
}

// WriteConfig sets up ralph.toml at root for ralph init: from
// config.Template when there is none, with the project's checks (Checks)
// as active [[gates]]; an existing ralph.toml without gates gets them
// added (before its [gates.build] table, if any), and one with gates is
// left alone. find false skips detection (ralph init --no-detect).
func WriteConfig(root string, find bool) (Written, error) {
	var w Written
	path := filepath.Join(root, config.FileName)
	old, err := os.ReadFile(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return w, err
	}
	if !missing {
		cfg, err := config.Load(root)
		if err != nil {
			return w, err
		}
		if w.Existing = len(cfg.Gates); w.Existing > 0 {
			return w, nil
		}
	}
	if find {
		if w.Gates, err = Checks(root); err != nil {
			return w, fmt.Errorf("detect the project's checks: %w (ralph init --no-detect skips detection)", err)
		}
	} else {
		w.Skipped = true
	}
	if missing {
		w.Created = true
		return w, writeFile(path, []byte(intoTemplate(config.Template, TOML(w.Gates))))
	}
	if len(w.Gates) == 0 {
		return w, nil
	}
	if err := writeFile(path, []byte(intoFile(string(old), TOML(w.Gates)))); err != nil {
		return w, err
	}
	if _, err := config.Load(root); err != nil {
		// Never leave the user's file broken.
		if rerr := writeFile(path, old); rerr != nil {
			return w, errors.Join(err, rerr)
		}
		return w, fmt.Errorf("add gates to %s: %w (it was left as it was)", config.FileName, err)
	}
	return w, nil
}

// templateExample is the last line of config.Template's commented
// [[gates]] example, after which the found gates go.
const templateExample = "# timeout = \"10m\"\n"

// intoTemplate puts block after the template's commented gate example,
// or at its end.
func intoTemplate(tmpl, block string) string {
	if block == "" {
		return tmpl
	}
	if i := strings.Index(tmpl, "# [[gates]]\n"); i >= 0 {
		if j := strings.Index(tmpl[i:], templateExample); j >= 0 {
			at := i + j + len(templateExample)
			return tmpl[:at] + "\n" + block + tmpl[at:]
		}
	}
	return strings.TrimRight(tmpl, "\n") + "\n\n" + block
}

// buildTable matches the [gates.build] table's header, which TOML needs
// after the [[gates]] entries.
var buildTable = regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*gates[ \t]*\.[ \t]*build[ \t]*\]`)

// intoFile puts block before src's [gates.build] table, or at its end.
func intoFile(src, block string) string {
	if loc := buildTable.FindStringIndex(src); loc != nil {
		return src[:loc[0]] + block + "\n" + src[loc[0]:]
	}
	if src != "" && !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	return src + "\n" + block
}

// TOML renders checks as [[gates]] entries, each with a comment naming
// where it was found.
func TOML(checks []Check) string {
	if len(checks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Found by ralph init: this project's own checks. A task completes only\n# when they pass; remove one that does not apply.\n")
	for i, c := range checks {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[[gates]]  # from %s\nname = %s\nrun = [", c.From, quote(c.Name))
		for i, a := range c.Run {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(a))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeFile replaces path's content whole, keeping its mode.
func writeFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return workspace.WriteFileMode(path, data, mode)
}

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// denialMarks are how tools report a refused access: the C library's
// message for EACCES and EPERM, and the errno names Node and others print.
var denialMarks = []string{"Permission denied", "permission denied", "EACCES", "Operation not permitted", "EPERM"}

// Denials returns the paths that text (a tool's output) reports as
// refused and that lie outside what p lets the agent write: the accesses
// the sandbox refused, as far as the tool said. dir is the agent's
// working directory, against which relative paths are read; symbolic
// links are followed, so a link in the workspace to a place outside it
// counts. A line that names no path, or only allowed ones, gives nothing.
func (p Policy) Denials(text, dir string) []string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.Lines(text) {
		if !hasMark(line) {
			continue
		}
		for _, path := range pathsIn(line) {
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			if !filepath.IsAbs(path) {
				continue // no working directory to read it against
			}
			path = filepath.Clean(path)
			if seen[path] || p.writable(resolve(path)) {
				continue
			}
			seen[path] = true
			out = append(out, path)
		}
	}
	return out
}

func hasMark(line string) bool {
	for _, m := range denialMarks {
		if strings.Contains(line, m) {
			return true
		}
	}
	return false
}

// pathsIn returns the words of line that look like paths: containing a
// slash, without the quotes and punctuation around them, and not a URL.
func pathsIn(line string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\'' || r == '"' || r == '`' || r == '(' || r == ')' || r == ','
	}) {
		w = strings.TrimRight(w, ":;.")
		w = strings.TrimLeft(w, "<[")
		w = strings.TrimRight(w, ">]")
		if !strings.Contains(w, "/") || strings.Contains(w, "://") || strings.ContainsRune(w, 0) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// resolve follows the symbolic links of path's longest existing prefix.
func resolve(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == filepath.Dir(p) {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// writable reports whether path is in or under a path p lets the agent
// write.
func (p Policy) writable(path string) bool {
	for _, w := range append(p.Write, p.Devices...) {
		if within(path, w) || within(path, resolve(w)) {
			return true
		}
	}
	return false
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator))
}

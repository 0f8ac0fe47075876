package scope

import (
	"io/fs"
	"path"
	"strings"
)

// FSSiblings returns a siblings reader for the section file at file (a
// slash-separated path inside fsys): relative specifiers are resolved from
// the file's directory, "@/x" is read as "src/x" (the usual Vite and Next.js
// alias), and anything else (packages, paths leaving fsys) is not found.
func FSSiblings(fsys fs.FS, file string) func(importPath string) ([]byte, bool) {
	dir := path.Dir(file)
	return func(spec string) ([]byte, bool) {
		var p string
		switch {
		case isRelative(spec):
			p = path.Join(dir, spec)
		case strings.HasPrefix(spec, "@/"):
			p = path.Join("src", spec[2:])
		default:
			return nil, false
		}
		if !fs.ValidPath(p) {
			return nil, false
		}
		b, err := fs.ReadFile(fsys, p)
		return b, err == nil
	}
}

package gate

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// tsconfigFor returns the tsconfig the bundle should use for every file,
// relative to root, when esbuild's own choice (the nearest tsconfig.json)
// would miss the project's path aliases: Vite's TypeScript templates keep
// a root tsconfig.json with only "references", and the compilerOptions,
// paths included, in tsconfig.app.json. It returns "" when the root
// tsconfig.json declares paths itself, or none of its references does.
func tsconfigFor(root string) string {
	top, ok := readTsconfig(filepath.Join(root, "tsconfig.json"))
	if !ok || len(top.CompilerOptions.Paths) > 0 {
		return ""
	}
	for _, ref := range top.References {
		rel := path.Clean(filepath.ToSlash(ref.Path))
		if !strings.HasSuffix(rel, ".json") {
			rel = path.Join(rel, "tsconfig.json")
		}
		if strings.Contains(path.Base(rel), "node") {
			continue // tsconfig.node.json: vite.config.ts, not the app
		}
		if tc, ok := readTsconfig(filepath.Join(root, filepath.FromSlash(rel))); ok && len(tc.CompilerOptions.Paths) > 0 {
			return rel
		}
	}
	return ""
}

// tsconfigFile is what tsconfigFor reads of a tsconfig file.
type tsconfigFile struct {
	CompilerOptions struct {
		Paths map[string]json.RawMessage `json:"paths"`
	} `json:"compilerOptions"`
	References []struct {
		Path string `json:"path"`
	} `json:"references"`
}

// readTsconfig reads a tsconfig file, which is JSON with comments and
// trailing commas.
func readTsconfig(file string) (tsconfigFile, bool) {
	var tc tsconfigFile
	data, err := os.ReadFile(file)
	if err != nil {
		return tc, false
	}
	return tc, json.Unmarshal(stripJSONC(data), &tc) == nil
}

// stripJSONC turns JSON with comments and trailing commas into JSON:
// comments become white space, then a comma before a closing bracket or
// brace is dropped; strings are left alone.
func stripJSONC(src []byte) []byte {
	return dropTrailingCommas(stripComments(src))
}

// skipString returns the index of the quote that closes the string
// opening at src[i], or len(src)-1.
func skipString(src []byte, i int) int {
	j := i + 1
	for j < len(src) && src[j] != '"' {
		if src[j] == '\\' {
			j++
		}
		j++
	}
	return min(j, len(src)-1)
}

func stripComments(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			j := skipString(src, i)
			out = append(out, src[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
			out = append(out, ' ')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
				i++
			}
			i++
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

func dropTrailingCommas(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := skipString(src, i)
			out = append(out, src[i:j+1]...)
			i = j
		case ',':
			j := i + 1
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\r' || src[j] == '\n') {
				j++
			}
			if j < len(src) && (src[j] == ']' || src[j] == '}') {
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

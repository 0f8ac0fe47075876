package gate

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
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
// trailing commas (JWCC, as github.com/tailscale/hujson reads it).
func readTsconfig(file string) (tsconfigFile, bool) {
	var tc tsconfigFile
	data, err := os.ReadFile(file)
	if err != nil {
		return tc, false
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return tc, false
	}
	return tc, json.Unmarshal(std, &tc) == nil
}

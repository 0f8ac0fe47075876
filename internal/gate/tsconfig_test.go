package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadTsconfig: a tsconfig is read with its comments and trailing
// commas, and a file that is not JSON with comments is not read at all.
func TestReadTsconfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, in string
		ok       bool
		paths    int
	}{
		{"plain JSON", `{"compilerOptions": {"paths": {"@/*": ["./src/*"]}}}`, true, 1},
		{"comments and trailing commas", "{\n  // the target\n  \"compilerOptions\": { /* aliases */ \"paths\": {\"@/*\": [\"./src/*\",], \"#/*\": [\"./x/*\"],},},\n}", true, 2},
		{"a comment marker inside a string", `{"compilerOptions": {"paths": {"@/*": ["http://x//y/*"], "/*": ["./a/*"]}},}`, true, 2},
		{"unterminated comment", `{"compilerOptions": {} /*`, false, 0},
		{"not JSON", `compilerOptions: {}`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "tsconfig.json")
			if err := os.WriteFile(file, []byte(tt.in), 0o644); err != nil {
				t.Fatal(err)
			}
			tc, ok := readTsconfig(file)
			if ok != tt.ok || len(tc.CompilerOptions.Paths) != tt.paths {
				t.Errorf("readTsconfig: ok %v with %d paths, want ok %v with %d", ok, len(tc.CompilerOptions.Paths), tt.ok, tt.paths)
			}
		})
	}
}

// TestBuildSucceedsViteTsconfigLayout: Vite's split layout, a root
// tsconfig.json with only references and the paths in tsconfig.app.json
// (JSON with comments and trailing commas), resolves the aliases.
func TestBuildSucceedsViteTsconfigLayout(t *testing.T) {
	dir := project(t, "vite-app")
	os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(`{
  "files": [],
  "references": [
    { "path": "./tsconfig.node.json" },
    { "path": "./tsconfig.app.json" },
  ],
}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "tsconfig.node.json"), []byte(`{"compilerOptions": {"paths": {"@/*": ["./nowhere/*"]}}, "include": ["vite.config.ts"]}`), 0o644)
	if r := check(t, &BuildSucceeds{OptIn: true}, dir); r.Status != Fail {
		t.Fatalf("without tsconfig.app.json: %s %s", r.Status, r.Message)
	}
	os.WriteFile(filepath.Join(dir, "tsconfig.app.json"), []byte(`{
  "compilerOptions": {
    /* Bundler mode */
    "jsx": "react-jsx",
    "paths": {
      "@/*": ["./src/*"], // shadcn
      "#ui/*": ["./src/ui/*"],
    },
  },
  "include": ["src"],
}
`), 0o644)
	if r := check(t, &BuildSucceeds{OptIn: true}, dir); r.Status != Pass {
		t.Errorf("with tsconfig.app.json: %s\n%s", r.Status, r.Message)
	}
	if got := tsconfigFor(dir); got != "tsconfig.app.json" {
		t.Errorf("tsconfigFor = %q", got)
	}
}

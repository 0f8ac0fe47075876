package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"{\n  // the target\n  \"a\": 1, // trailing\n}", "{\n   \n  \"a\": 1  \n}"},
		{`{"a": [1, 2, /* two */ ], }`, `{"a": [1, 2   ] }`},
		{`{"url": "http://x//y", "glob": "src/**/*.ts",}`, `{"url": "http://x//y", "glob": "src/**/*.ts"}`},
		{`{"q": "a \"quoted\", // not a comment",}`, `{"q": "a \"quoted\", // not a comment"}`},
	}
	for _, tt := range tests {
		if got := string(stripJSONC([]byte(tt.in))); got != tt.want {
			t.Errorf("stripJSONC(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if !json.Valid(stripJSONC([]byte(tt.in))) {
			t.Errorf("stripJSONC(%q) is not JSON", tt.in)
		}
	}
}

// FuzzStripJSONC: stripping never panics and leaves JSON as it is.
func FuzzStripJSONC(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, "{\n// c\n\"a\": [1,],}", `{"s": "/* no */"}`, `"unterminated`, `/*`, `//`, `,`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := stripJSONC([]byte(s))
		// JSON has no comments and no trailing commas: it stays as it is.
		if json.Valid([]byte(s)) && string(out) != s {
			t.Fatalf("valid JSON %q changed to %q", s, out)
		}
	})
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

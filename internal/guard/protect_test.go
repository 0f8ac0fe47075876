package guard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/snapshot"
)

func TestScriptName(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npm", "test"}, "test"},
		{[]string{"npm", "t"}, "test"},
		{[]string{"npm", "run", "lint"}, "lint"},
		{[]string{"npm", "run-script", "build"}, "build"},
		{[]string{"npm", "run"}, ""},
		{[]string{"npm", "ci"}, ""},
		{[]string{"/usr/bin/pnpm", "typecheck"}, "typecheck"},
		{[]string{"yarn", "test"}, "test"},
		{[]string{"yarn", "--silent"}, ""},
		{[]string{"bun", "run", "check"}, "check"},
		{[]string{"go", "test", "./..."}, ""},
		{[]string{"npm"}, ""},
	} {
		if got := scriptName(tc.argv); got != tc.want {
			t.Errorf("scriptName(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestRepoPath(t *testing.T) {
	for _, tc := range []struct{ dir, arg, want string }{
		{"", "scripts/check.sh", "scripts/check.sh"},
		{"", "./scripts/check.sh", "scripts/check.sh"},
		{"web", "jest.config.js", "web/jest.config.js"},
		{"web", "../check.sh", "check.sh"},
		{"", "../outside.sh", ""},
		{"", "/etc/passwd", ""},
		{"", "-v", ""},
		{"", "*.go", ""},
		{"", "", ""},
		{"", ".", ""},
	} {
		if got := repoPath(tc.dir, tc.arg); got != tc.want {
			t.Errorf("repoPath(%q, %q) = %q, want %q", tc.dir, tc.arg, got, tc.want)
		}
	}
}

// The default globs cover the usual test layouts and leave source alone.
func TestDefaultProtectGlobs(t *testing.T) {
	p := Protection{Globs: config.DefaultProtect}
	for path, protected := range map[string]bool{
		"parser_test.go":                   true,
		"internal/x/parser_test.go":        true,
		"internal/x/testdata/in.txt":       true,
		"tests/test_api.py":                true,
		"pkg/test_api.py":                  true,
		"conftest.py":                      true,
		"pytest.ini":                       true,
		"src/App.test.tsx":                 true,
		"src/__tests__/app.js":             true,
		"web/vitest.config.ts":             true,
		"crates/a/tests/it.rs":             true,
		"src/test/java/AppTest.java":       true,
		"parser.go":                        false,
		"src/App.tsx":                      false,
		"src/main/java/App.java":           false,
		"internal/testing/helpers.go":      false,
		"docs/testing.md":                  false,
		"internal/x/testdata_generator.go": false,
	} {
		if got := p.glob(path) != ""; got != protected {
			t.Errorf("%s: protected = %v, want %v (glob %q)", path, got, protected, p.glob(path))
		}
	}
}

func TestWeakened(t *testing.T) {
	test := CommandGate{Name: "test", Argv: []string{"go", "test", "./..."}, Timeout: "10m"}
	vet := CommandGate{Name: "vet", Argv: []string{"go", "vet", "./..."}}
	for _, tc := range []struct {
		name        string
		before, now []CommandGate
		want        string
	}{
		{"same", []CommandGate{test, vet}, []CommandGate{test, vet}, ""},
		{"added", []CommandGate{test}, []CommandGate{test, vet}, ""},
		{"removed", []CommandGate{test, vet}, []CommandGate{test}, "vet (removed)"},
		{"all removed", []CommandGate{test, vet}, nil, "test (removed), vet (removed)"},
		{"other command", []CommandGate{test}, []CommandGate{{Name: "test", Argv: []string{"true"}, Timeout: "10m"}}, "test (runs something else)"},
		{"other dir", []CommandGate{test}, []CommandGate{{Name: "test", Argv: test.Argv, Dir: "empty", Timeout: "10m"}}, "test (runs something else)"},
		{"optional", []CommandGate{test}, []CommandGate{{Name: "test", Argv: test.Argv, Timeout: "10m", Optional: true}}, "test (made optional)"},
		{"shorter timeout", []CommandGate{test}, []CommandGate{{Name: "test", Argv: test.Argv, Timeout: "1s"}}, "test (timeout 1s, was 10m)"},
		{"longer timeout", []CommandGate{test}, []CommandGate{{Name: "test", Argv: test.Argv, Timeout: "20m"}}, ""},
		{"timeout set where none was", []CommandGate{vet}, []CommandGate{{Name: "vet", Argv: vet.Argv, Timeout: "1s"}}, "vet (timeout 1s, was )"},
	} {
		if got := strings.Join(Weakened(tc.before, tc.now), ", "); got != tc.want {
			t.Errorf("%s: Weakened = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Changes against a real snapshot: deleted and modified protected files
// are listed with why, new files and unprotected ones are not, and a
// package.json counts only when a script a gate runs changed.
func TestChangesAndRestore(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t)
	write(t, root, "parser.go", "package p\n")
	write(t, root, "parser_test.go", "package p\n// test\n")
	write(t, root, "old_test.go", "package p\n")
	write(t, root, "scripts/check.sh", "grep -q ok out.txt\n")
	write(t, root, "package.json", `{"scripts": {"test": "jest", "dev": "vite"}, "dependencies": {}}`)
	write(t, root, "ralph.toml", "[[gates]]\nname = \"check\"\nrun = [\"sh\", \"scripts/check.sh\"]\n")
	snaps, err := snapshot.Open(ctx, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snaps.Save(ctx, "task-1-pre", "before"); err != nil {
		t.Fatal(err)
	}
	p := Protection{Globs: config.DefaultProtect, Gates: []CommandGate{
		{Name: "check", Argv: []string{"sh", "scripts/check.sh"}},
		{Name: "unit", Argv: []string{"npm", "test"}},
	}}
	changes := func() string {
		cs, err := p.Changes(ctx, snaps, root, "task-1-pre")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, c := range cs {
			lines = append(lines, c.Line())
		}
		return strings.Join(lines, "; ")
	}

	// Honest work: source changed, a test added, a dependency added.
	write(t, root, "parser.go", "package p\n\nfunc Parse() {}\n")
	write(t, root, "new_test.go", "package p\n")
	write(t, root, "package.json", `{"scripts": {"test": "jest", "dev": "vite --port 1"}, "dependencies": {"x": "1"}}`)
	if got := changes(); got != "" {
		t.Fatalf("honest work held: %s", got)
	}

	// Cheats.
	write(t, root, "scripts/check.sh", "exit 0\n")
	write(t, root, "parser_test.go", "package p\n")
	if err := os.Remove(filepath.Join(root, "old_test.go")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "package.json", `{"scripts": {"test": "true"}}`)
	write(t, root, "ralph.toml", "")
	want := "D old_test.go (matches **/*_test.go); " +
		"M package.json (a gate runs its script \"test\"); " +
		"M parser_test.go (matches **/*_test.go); " +
		"M ralph.toml (ralph.toml holds the gates); " +
		"M scripts/check.sh (gate check reads it)"
	if got := changes(); got != want {
		t.Fatalf("changes:\n got %s\nwant %s", got, want)
	}
	cs, _ := p.Changes(ctx, snaps, root, "task-1-pre")
	for _, c := range cs {
		if c.Path == "scripts/check.sh" && (!strings.Contains(c.Diff, "-grep -q ok out.txt") || !strings.Contains(c.Diff, "+exit 0") || !strings.HasPrefix(c.Diff, "--- a/scripts/check.sh")) {
			t.Errorf("diff of check.sh:\n%s", c.Diff)
		}
	}
	fp := Fingerprint(root, cs)
	if Fingerprint(root, cs) != fp {
		t.Error("fingerprint is not stable")
	}
	write(t, root, "parser_test.go", "package p\n// other\n")
	if Fingerprint(root, cs) == fp {
		t.Error("fingerprint did not change with the content")
	}

	if err := Restore(ctx, snaps, root, "task-1-pre", cs); err != nil {
		t.Fatal(err)
	}
	if got := changes(); got != "" {
		t.Errorf("after restore: %s", got)
	}
	if got := read(t, root, "old_test.go"); got != "package p\n" {
		t.Errorf("old_test.go = %q", got)
	}
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A new file is held only when it changes how existing tests run.
func TestRunnerHook(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"pkg/zz_main_test.go": "package pkg\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n",
		"pkg/new_test.go":     "package pkg\n\n// TestMain is mentioned, not declared.\nfunc TestNew(t *testing.T) {}\n",
	}
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, held := range map[string]bool{
		"pkg/zz_main_test.go":      true,
		"pkg/new_test.go":          false,
		"tests/conftest.py":        true,
		"pytest.ini":               true,
		"web/jest.config.ts":       true,
		"web/vitest.setup.js":      true,
		"web/.mocharc.yml":         true,
		"tests/test_new.py":        false,
		"web/src/new.test.ts":      false,
		"src/main.rs":              false,
		"pkg/missing_main_test.go": false,
	} {
		if got := RunnerHook(root, rel) != ""; got != held {
			t.Errorf("RunnerHook(%s) held = %v, want %v (%q)", rel, got, held, RunnerHook(root, rel))
		}
	}
}

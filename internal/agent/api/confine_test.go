package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveConfinement(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, dir := newToolbox(t)
	write(t, dir, "in/file.txt", "inside")
	links := map[string]string{
		"out-dir":      outside,                           // a directory outside
		"out-file":     filepath.Join(outside, "secret"),  // a file outside
		"dangling-out": filepath.Join(outside, "nothing"), // a dangling link outside
		"in-link":      filepath.Join(dir, "in"),          // a link that stays inside
		"in/up":        "..",                              // relative, stays inside
		"in/up2":       "../..",                           // relative, leaves
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}

	refused := map[string]string{
		"":                        "path is empty",
		"/etc/passwd":             "is absolute",
		filepath.Join(dir, "in"):  "is absolute",
		"..":                      "leaves the workspace",
		"../x":                    "leaves the workspace",
		"in/../../x":              "leaves the workspace",
		"out-dir":                 "resolves outside the workspace",
		"out-dir/secret":          "resolves outside the workspace",
		"out-dir/new/deeper.txt":  "resolves outside the workspace", // the deepest existing ancestor is checked
		"out-file":                "resolves outside the workspace",
		"dangling-out":            "cannot be resolved",
		"dangling-out/x.txt":      "cannot be resolved",
		"in/up2/secret":           "resolves outside the workspace",
		"in-link/../../../etc/hi": "leaves the workspace",
	}
	for p, want := range refused {
		if _, err := tb.ws.resolve(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resolve(%q) = %v, want an error saying %q", p, err, want)
		}
	}
	for _, p := range []string{".", "in/file.txt", "in-link/file.txt", "in/up/in/file.txt", "new/dir/file.txt", "./in//file.txt"} {
		if _, err := tb.ws.resolve(p); err != nil {
			t.Errorf("resolve(%q): %v", p, err)
		}
	}

	// Every tool refuses, with an error result and no effect outside.
	for _, c := range []struct {
		tool  string
		input map[string]any
	}{
		{"read_file", map[string]any{"path": "out-file"}},
		{"read_file", map[string]any{"path": "out-dir/secret"}},
		{"write_file", map[string]any{"path": "out-dir/pwned.txt", "content": "x"}},
		{"write_file", map[string]any{"path": "dangling-out", "content": "x"}},
		{"edit_file", map[string]any{"path": "out-file", "old_string": "s3cret", "new_string": "x"}},
		{"list_files", map[string]any{"dir": "out-dir"}},
		{"grep", map[string]any{"pattern": "s3cret", "path": "out-dir"}},
		{"run", map[string]any{"argv": []string{"touch", "pwned"}, "dir": "out-dir"}},
		{"write_file", map[string]any{"path": "/tmp/pwned", "content": "x"}},
		{"write_file", map[string]any{"path": "../pwned", "content": "x"}},
	} {
		out, err := call(t, tb, c.tool, c.input)
		if err == nil {
			t.Errorf("%s %v succeeded: %q", c.tool, c.input, out)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("something was written outside: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "s3cret" {
		t.Errorf("secret changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "nothing")); err == nil {
		t.Error("the dangling link was followed")
	}

	// Grep over the whole workspace does not follow links out of it.
	out, err := call(t, tb, "grep", map[string]any{"pattern": "s3cret"})
	if err != nil || out != "no matches" {
		t.Errorf("grep followed a link out: %q, %v", out, err)
	}
}

// The workspace root may itself be reached through a symlink.
func TestResolveRootThroughSymlink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	ws, err := newWorkspace(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a.txt", "b/c.txt", "."} {
		if _, err := ws.resolve(p); err != nil {
			t.Errorf("resolve(%q): %v", p, err)
		}
	}
	if _, err := newWorkspace(filepath.Join(real, "missing")); err == nil {
		t.Error("a missing workspace was accepted")
	}
}

package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// LogGit puts a git on PATH, for the rest of the test, that appends each
// call's arguments (one line a call) to the file it returns and then runs
// the real git: for tests that count which git commands a path runs.
func LogGit(t testing.TB) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$*\" >>'" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// FakeBin writes an executable shell script named name into a new
// temporary directory and returns its path. Use it as a stand-in agent
// binary that prints canned output, fails or hangs.
func FakeBin(t testing.TB, name, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// RecordingBin returns a wrapper around the program real that copies its
// standard output to the file out (created or truncated) and keeps its
// exit status, for capturing a real CLI's stream into testdata while a
// test runs it.
func RecordingBin(t testing.TB, real, out string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), filepath.Base(real)+"-recording")
	script := "#!/usr/bin/env bash\nset -o pipefail\n\"" + real + "\" \"$@\" | tee \"" + out + "\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Record returns the binary a test should run for real: a RecordingBin
// writing testdata/NAME when RALPH_RECORD is set (to refresh recorded
// streams), real itself otherwise.
func Record(t testing.TB, real, name string) string {
	t.Helper()
	if os.Getenv("RALPH_RECORD") == "" {
		return real
	}
	out, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	return RecordingBin(t, real, out)
}

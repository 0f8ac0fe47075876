// Package demo holds the example project and the scripted agent that
// `ralph demo` runs: a small landing page planned, rejected once, built,
// failed by a gate, fixed and finished, offline and without an API key.
package demo

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed project script.json
var files embed.FS

// Script returns the demo agent's script.
func Script() []byte {
	data, err := files.ReadFile("script.json")
	if err != nil {
		panic(err) // embedded at build time
	}
	return data
}

// WriteProject writes the example project into dir.
func WriteProject(dir string) error {
	return fs.WalkDir(files, "project", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("project", path)
		target := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(path) == ".sh" {
			mode = 0o755
		}
		if err := os.WriteFile(target, data, mode); err != nil {
			return fmt.Errorf("write demo project: %w", err)
		}
		return nil
	})
}

// Explain tells what the demo run in repo did and where to look.
func Explain(w io.Writer, repo string) {
	fmt.Fprintf(w, `
What happened:
  1. The agent wrote a plan with no theme and an empty screen, and asked to
     finish at once: the harness deferred that and rejected the plan.
  2. It fixed the plan; the harness validated it, applied the plan's theme
     to src/index.css, loaded each section's recipe into feedback.md and
     opened the BUILD phase.
  3. It built two of three sections, replaced the scaffold App.tsx, and
     asked to finish: the sections-exist gate failed and feedback.md said
     what was missing.
  4. It added the last section; every gate passed; task-1-post was saved.

Look around:
  cd %s
  ralph status
  ralph log
  ralph snapshot list
`, repo)
}

// Package demo holds the example project and the scripted agent that
// `ralph demo` runs: a small landing page planned, rejected once, built,
// failed by a gate, fixed and finished, offline and without an API key.
package demo

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/git"
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
     asked to finish: the sections-exist gate failed, and ui-renders (with
     Chromium on PATH) loaded the page at desktop and phone sizes and found
     the missing section and a light-grey tagline on white; feedback.md
     said what was wrong, with screenshots in .ralph/preview/.
  4. It added the last section and used the theme's colour for the
     tagline; every gate passed; task-1-post was saved.

Look around:
  cd %s
  ralph status
  ralph log
  ralph snapshot list
`, repo)
}

// Create makes the demo's repository: the example project committed in a
// new git repository at into (which must not exist), or in a new
// temporary directory when into is "", and the agent's script beside it.
// It returns the repository and the script's path.
func Create(ctx context.Context, into string) (repo, script string, err error) {
	base, err := os.MkdirTemp("", "ralph-demo-")
	if err != nil {
		return "", "", err
	}
	repo = filepath.Join(base, "tideline")
	if into != "" {
		if _, err := os.Stat(into); err == nil {
			return "", "", failure.New(failure.Usage, fmt.Errorf("%s already exists; --into wants a new directory", into))
		}
		repo = into
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return "", "", err
	}
	if err := WriteProject(repo); err != nil {
		return "", "", err
	}
	script = filepath.Join(base, "demo-agent.json")
	if err := os.WriteFile(script, Script(), 0o644); err != nil {
		return "", "", err
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=ralph demo", "-c", "user.email=demo@ralph.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "Tideline: the starting point"},
	} {
		if _, err := git.Run(ctx, repo, args...); err != nil {
			var ee *exec.Error
			if errors.As(err, &ee) {
				return "", "", fmt.Errorf("demo needs git on PATH: %w", err)
			}
			return "", "", err
		}
	}
	return repo, script, nil
}

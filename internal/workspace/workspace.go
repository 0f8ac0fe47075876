// Package workspace holds ralph's file protocol: the .ralph/ directory a
// workspace keeps its agent-facing state in, the harness-private files next
// to it, and the lock that lets only one ralph drive a workspace at a time.
//
// Every write goes through a temporary file and a rename, so a crash or a
// kill at any moment leaves either the old content or the new, never half.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/git"
)

// Dir is the name of the state directory at the workspace root.
const Dir = ".ralph"

// Agent-facing files in .ralph/ (SPEC §2).
const (
	Origin      = "origin.md"
	Task        = "task.md"
	Plan        = "plan.tsx"
	Feedback    = "feedback.md"
	Status      = "status.txt"
	Phase       = "phase.txt"
	Iteration   = "iteration.txt"
	Summary     = "summary.md"
	TaskCounter = "task-counter.txt"
	TaskHistory = "task-history.md"
)

// Harness-private files in .ralph/: ignored by git, never snapshotted.
const (
	Database = "ralph.db"
	LockFile = "ralph.lock"
	Logs     = "logs"
	// Request is the latest ralph run request (message and options),
	// written before anything else so a run killed at once can resume.
	Request = "request.json"
	// Worktrees holds the git worktrees of worktree tasks, parallel
	// specs and Temporal landings.
	Worktrees = "worktrees"
	// ServeToken is the dashboard's access token.
	ServeToken = "serve.token"
	// ServeLock is held by the one dashboard a workspace has.
	ServeLock = "serve.lock"
	// NotifyLock is held by the one process that sends a workspace's
	// notifications and listens for their answers (a run, or ralph serve).
	NotifyLock = "notify.lock"
	// Preview holds the ui-renders gate's screenshots of the app.
	Preview = "preview"
)

// Status values of status.txt.
const (
	StatusRunning  = "running"
	StatusComplete = "complete"
	StatusWaiting  = "waiting"
	StatusFailed   = "failed"
)

// Phase values of phase.txt.
const (
	PhasePlan  = "plan"
	PhaseBuild = "build"
)

// ErrNotGitRepo means the directory is not inside a git working tree.
var ErrNotGitRepo = errors.New("not a git repository (run `git init` first)")

// Workspace is a git working tree with ralph's state in it.
type Workspace struct {
	// Root is the absolute path of the working tree's top directory.
	Root string
}

// Open finds the git working tree that contains dir.
func Open(ctx context.Context, dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("open workspace: %s is not a directory", abs)
	}
	top, err := git.Line(ctx, abs, "rev-parse", "--show-toplevel")
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s: %w", abs, ErrNotGitRepo)
		}
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &Workspace{Root: top}, nil
}

// Path returns the path of a file in .ralph/.
func (w *Workspace) Path(name string) string {
	return filepath.Join(w.Root, Dir, name)
}

// StateDir returns the path of .ralph/.
func (w *Workspace) StateDir() string { return filepath.Join(w.Root, Dir) }

// Init creates .ralph/ with its .gitignore and the initial state files.
// It leaves existing files alone, so it is safe to run twice.
func (w *Workspace) Init() error {
	if err := os.MkdirAll(w.Path(Logs), 0o755); err != nil {
		return fmt.Errorf("init workspace: %w", err)
	}
	ignore := "# ralph's private files: the run history must survive rollbacks.\n" + strings.Join(Private, "\n") + "\n"
	files := map[string]string{
		".gitignore": ignore,
		Phase:        PhasePlan,
		Status:       StatusRunning,
		Iteration:    "0",
		TaskCounter:  "0",
		TaskHistory:  "",
	}
	for name, content := range files {
		if _, err := os.Stat(w.Path(name)); err == nil {
			continue
		}
		if err := w.Write(name, content); err != nil {
			return fmt.Errorf("init workspace: %w", err)
		}
	}
	// A .gitignore from an older ralph gains the private files it lacks.
	have, err := w.Read(".gitignore")
	if err != nil {
		return fmt.Errorf("init workspace: %w", err)
	}
	lines := strings.Split(have, "\n")
	var missing []string
	for _, p := range Private {
		if !slices.Contains(lines, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if have != "" && !strings.HasSuffix(have, "\n") {
			have += "\n"
		}
		if err := w.Write(".gitignore", have+strings.Join(missing, "\n")+"\n"); err != nil {
			return fmt.Errorf("init workspace: %w", err)
		}
	}
	return nil
}

// Read returns a .ralph/ file's content; a missing file reads as "".
func (w *Workspace) Read(name string) (string, error) {
	data, err := os.ReadFile(w.Path(name))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Write replaces a .ralph/ file's content atomically.
func (w *Workspace) Write(name, content string) error {
	return WriteFile(w.Path(name), []byte(content))
}

// Append adds text to the end of a .ralph/ file (atomically: the whole
// file is rewritten through a rename).
func (w *Workspace) Append(name, text string) error {
	old, err := w.Read(name)
	if err != nil {
		return err
	}
	return w.Write(name, old+text)
}

// fileMode is the mode WriteFile gives a file; SetInt writes in place
// only over a file of that mode.
const fileMode = 0o644

// WriteFile writes data to path through a temporary file in the same
// directory and a rename, creating the directory if needed.
func WriteFile(path string, data []byte) error {
	return WriteFileMode(path, data, fileMode)
}

// WriteFileMode is WriteFile with the file's mode: a crash leaves either
// the old file or the new one, never half of it, and the data is never
// readable under a wider mode than perm.
func WriteFileMode(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Phase returns the current phase; anything but "build" is "plan".
func (w *Workspace) Phase() string {
	s, _ := w.Read(Phase)
	if strings.TrimSpace(s) == PhaseBuild {
		return PhaseBuild
	}
	return PhasePlan
}

// SetPhase writes phase.txt.
func (w *Workspace) SetPhase(p string) error { return w.Write(Phase, p) }

// Status returns status.txt, trimmed and lower-cased.
func (w *Workspace) Status() string {
	s, _ := w.Read(Status)
	return strings.ToLower(strings.TrimSpace(s))
}

// SetStatus writes status.txt.
func (w *Workspace) SetStatus(s string) error { return w.Write(Status, s) }

// Int reads a .ralph/ file holding a number; missing or garbage reads as 0.
func (w *Workspace) Int(name string) int {
	s, _ := w.Read(name)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}

// SetInt writes a number to a .ralph/ file.
//
// A counter's next value is most often as long as the last ("41", "42"):
// then it is written over the old one in place (overwrite), which costs a
// write instead of a new file and a rename (making a file is what costs:
// up to half a millisecond where the file system searches for an inode
// not recently freed, on every iteration).
func (w *Workspace) SetInt(name string, n int) error {
	data := []byte(strconv.Itoa(n))
	if overwrite(w.Path(name), data, fileMode) {
		return nil
	}
	return WriteFile(w.Path(name), data)
}

// PlanContent returns plan.tsx, or "" when it is missing or blank.
func (w *Workspace) PlanContent() string {
	s, _ := w.Read(Plan)
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}

// Exists reports whether path exists.
func Exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// ReadFileIfExists reads path; a missing file reads as nil without error.
func ReadFileIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// ErrOutside means a path from configuration or a flag leads out of the
// workspace.
var ErrOutside = errors.New("outside the workspace")

// Inside resolves rel (relative to root, or absolute) to an absolute path
// and checks that it stays inside root once symbolic links are followed,
// as far as the path exists. ralph writes only to such paths: a
// repository's ralph.toml must not make it write elsewhere.
func Inside(root, rel string) (string, error) {
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Clean(path)
	// Follow the links of the longest part of the path that exists.
	existing, rest := path, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", err
	}
	resolved = filepath.Join(resolved, rest)
	if r, err := filepath.Rel(top, resolved); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: %w", rel, ErrOutside)
	}
	return resolved, nil
}

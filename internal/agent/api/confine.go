package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// workspace confines the tools to one directory tree.
type workspace struct {
	// root is the workspace root as given, made absolute.
	root string
	// real is root with its symlinks resolved.
	real string
}

func newWorkspace(dir string) (*workspace, error) {
	if dir == "" {
		return nil, errors.New("workspace: no directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &workspace{root: abs, real: real}, nil
}

// resolve turns rel, a path relative to the workspace root, into a path
// on disk. It refuses an empty or absolute path, a path that climbs out
// with "..", and a path whose deepest existing part is (or passes
// through) a symlink that resolves outside the workspace. The file
// itself need not exist.
func (w *workspace) resolve(rel string) (string, error) {
	if strings.TrimSpace(rel) == "" {
		return "", errors.New("path is empty: give a path relative to the workspace root")
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) {
		return "", fmt.Errorf("path %q is absolute: give a path relative to the workspace root", rel)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean != "." && !filepath.IsLocal(clean) {
		return "", fmt.Errorf("path %q leaves the workspace", rel)
	}
	path := filepath.Join(w.root, clean)
	// Resolve the deepest part of the path that exists (a dangling
	// symlink counts as existing): every symlink on the way must stay
	// inside the workspace.
	for p := path; ; {
		if _, err := os.Lstat(p); err == nil {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return "", fmt.Errorf("path %q goes through a symlink that cannot be resolved", rel)
			}
			if !w.inside(real) {
				return "", fmt.Errorf("path %q resolves outside the workspace (through a symlink)", rel)
			}
			break
		}
		parent := filepath.Dir(p)
		if parent == p || len(parent) < len(w.root) {
			break
		}
		p = parent
	}
	return path, nil
}

// inside reports whether real, a symlink-free absolute path, is the
// workspace root or below it.
func (w *workspace) inside(real string) bool {
	r, err := filepath.Rel(w.real, real)
	return err == nil && (r == "." || filepath.IsLocal(r))
}

// rel returns path relative to the workspace root, with slashes.
func (w *workspace) rel(path string) string {
	r, err := filepath.Rel(w.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

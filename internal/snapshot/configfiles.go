package snapshot

import (
	"path/filepath"
	"slices"

	"github.com/ralph-harness/ralph/internal/filestamp"
)

// configFiles are the repository's own files that change how git records
// a file and that a git process reads once, as it starts: its config
// (the common directory's, and a linked worktree's own), config.worktree,
// and info/attributes.
func (r *Repo) configFiles() []string {
	files := []string{
		filepath.Join(r.gitDir, "config"),
		filepath.Join(r.gitDir, "config.worktree"),
		filepath.Join(r.common, "info", "attributes"),
	}
	if r.common != r.gitDir {
		files = append(files, filepath.Join(r.common, "config"))
	}
	return files
}

// freshConfig forgets what buildTree keeps from git's configuration (its
// long-running gits, plainConfig's answer) when one of configFiles
// changed since it was kept, and notes their state for what starts next.
// It costs an lstat a file (the caller holds mu).
func (r *Repo) freshConfig() {
	files := r.configFiles()
	now := make([]filestamp.Stamp, len(files))
	for i, f := range files {
		now[i] = filestamp.Lstat(f)
	}
	kept := r.config.read || r.hasher != nil
	if kept && !slices.Equal(now, r.config.files) {
		r.logger.Debug("the repository's configuration changed: git starts again")
		r.forgetConfig()
	}
	r.config.files = now
}

// forgetConfig ends buildTree's long-running gits and forgets
// plainConfig's answer (the caller holds mu): what git reads of the
// configuration and attributes as it starts is read again.
func (r *Repo) forgetConfig() {
	r.closeBatches()
	r.config.read = false
}

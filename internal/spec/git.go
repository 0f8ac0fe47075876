package spec

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/git"
)

// emptyTree is git's empty tree, the base of a diff from an empty
// repository.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// maxDiff caps the diff the verifier is shown.
const maxDiff = 200 << 10

// head returns HEAD's commit, "" in a repository without commits.
func head(ctx context.Context, root string) (string, error) {
	out, err := git.Line(ctx, root, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		if _, err2 := git.Run(ctx, root, "rev-parse", "--git-dir"); err2 == nil {
			return "", nil // no commits yet
		}
		return "", err
	}
	return out, nil
}

// resetHead moves the current branch back to commit (a planner must not
// commit); an empty commit deletes the branch's first commit.
func resetHead(ctx context.Context, root, commit string) error {
	if commit == "" {
		_, err := git.Run(ctx, root, "update-ref", "-d", "HEAD")
		return err
	}
	_, err := git.Run(ctx, root, "reset", "-q", commit)
	return err
}

// diff returns the stat and patch from base to commit, capped at maxDiff.
func diff(ctx context.Context, root, base, commit string) (string, error) {
	if base == "" {
		base = emptyTree
	}
	// No external diff and no textconv: the agent can name either in
	// .git/config, and git would run it as ralph, outside the sandbox.
	stat, err := git.Run(ctx, root, "diff", "--no-ext-diff", "--no-textconv", "--stat", base, commit)
	if err != nil {
		return "", err
	}
	patch, err := git.Run(ctx, root, "diff", "--no-ext-diff", "--no-textconv", base, commit)
	if err != nil {
		return "", err
	}
	if len(patch) > maxDiff {
		patch = patch[:maxDiff] + "\n… (diff truncated; run git diff yourself for the rest)\n"
	}
	return strings.TrimRight(stat+"\n"+patch, "\n"), nil
}

// commitsSince lists the commits on HEAD since base, one "hash subject"
// line each, oldest first; every commit when base is "" (no commit before).
func commitsSince(ctx context.Context, root, base string) (string, error) {
	cur, err := head(ctx, root)
	if err != nil || cur == "" || cur == base {
		return "", err
	}
	rng := "HEAD"
	if base != "" {
		rng = base + "..HEAD"
	}
	out, err := git.Run(ctx, root, "log", "--reverse", "--format=%h %s", rng)
	return strings.TrimSpace(out), err
}

// pendingChanges lists the working tree's uncommitted changes (git status
// --short), leaving out ralph's .ralph/ and the specs folder specsDir (the
// pipeline's own files).
func pendingChanges(ctx context.Context, root, specsDir string) (string, error) {
	out, err := git.Run(ctx, root, "status", "--short", "--untracked-files=all", "--", ".", ":(exclude).ralph", ":(exclude)"+specsDir)
	return strings.TrimRight(out, "\n"), err
}

// indexLock returns the path of the repository's index lock file
// (.git/index.lock) when it exists, "" otherwise: git commits nothing
// while it does, and one that a git killed mid-command left behind stays
// until someone removes it. Ralph never removes it: a git may be running.
func indexLock(ctx context.Context, root string) string {
	p, err := git.Line(ctx, root, "rev-parse", "--git-path", "index.lock")
	if err != nil || p == "" {
		return ""
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, p)
	}
	if _, err := os.Lstat(abs); err != nil {
		return ""
	}
	return p
}

// Package worktree makes, reuses, recovers and removes the git worktrees
// ralph runs tasks and specs in: under .ralph/worktrees/ on the user's
// machine (ralph run --worktree, parallel specs, Temporal landings) and
// under the cache of a Temporal worker (one per attempt).
//
// Every change to a repository's list of worktrees, and every read of it,
// happens under one lock per repository: a mutex in this process and a
// lock file in the repository's git directory for other ralph processes.
// git misreads a worktree another process is adding at that moment, and
// two adds at once race on the repository's files.
//
// Ensure is the one way to get a worktree. It reuses a whole worktree,
// makes again one that a killed `git worktree add` left half-made (git
// marks those "initializing"), and frees the branch when a dead
// worktree still holds it: one whose directory is gone, one left
// half-made, or one ralph made whose ralph process is gone. A worktree
// the user made, or one a live ralph works in, is never taken away.
//
// A `git worktree add` killed before it wrote its record's commondir
// leaves a record git can neither use nor prune; every call here first
// clears those (see clearHalfMade).
package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// ErrBranchHeld means the branch is checked out in another worktree that
// is alive (the user's own, or one a running ralph works in).
var ErrBranchHeld = errors.New("the branch is checked out in another worktree")

// owner names the file, in a worktree's administrative directory
// (.git/worktrees/<name>/), that says ralph made the worktree: only such
// a worktree is freed when its process is gone.
const owner = "ralph-owner"

// Options say what Ensure checks out.
type Options struct {
	// Branch is the branch checked out in the worktree.
	Branch string
	// Start is the commit a Branch that does not exist yet starts from;
	// when empty, Branch must exist.
	Start string
	// Reset starts over: a worktree already at the path is removed and
	// made again, and an existing Branch is moved to Start (a worker's
	// attempt starts at the step's head whatever an earlier one did).
	Reset bool
}

// Outcome says what Ensure found at the worktree's path.
type Outcome int

// Outcomes of Ensure.
const (
	// Created: there was no worktree; there is one now.
	Created Outcome = iota
	// Reused: a whole worktree was there and is used as it is.
	Reused
	// Recovered: a half-made or broken worktree was there and was made
	// again.
	Recovered
)

// String names the outcome: created, reused or recovered.
func (o Outcome) String() string {
	switch o {
	case Reused:
		return "reused"
	case Recovered:
		return "recovered"
	}
	return "created"
}

// Result is what Ensure did.
type Result struct {
	Outcome Outcome
	// Freed is the dead worktree that held the branch and was removed,
	// "" when none.
	Freed string
}

// Ensure makes sure dir is a worktree of the repository at repo with
// o.Branch checked out, and says how it got there. A missing Branch is
// created at o.Start.
func Ensure(ctx context.Context, repo, dir string, o Options) (Result, error) {
	if o.Branch == "" {
		return Result{}, errors.New("worktree: no branch")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, fmt.Errorf("worktree %s: %w", dir, err)
	}
	l, err := lock(ctx, repo)
	if err != nil {
		return Result{}, fmt.Errorf("worktree %s: %w", dir, err)
	}
	defer l.unlock()
	if err := clearHalfMade(l.common, dir); err != nil {
		return Result{}, fmt.Errorf("worktree %s: %w", dir, err)
	}
	if err := clearBranchLock(ctx, l.common, o.Branch); err != nil {
		return Result{}, fmt.Errorf("worktree %s: %w", dir, err)
	}
	res, err := ensure(ctx, repo, dir, o)
	if err != nil {
		return res, fmt.Errorf("worktree %s: %w", dir, err)
	}
	return res, nil
}

func ensure(ctx context.Context, repo, dir string, o Options) (Result, error) {
	var res Result
	if !o.Reset {
		switch health(dir) {
		case whole:
			return Result{Outcome: Reused}, nil
		case broken:
			res.Outcome = Recovered
		}
	}
	wts, err := list(ctx, repo)
	if err != nil {
		return res, err
	}
	if w, ok := find(wts, dir); ok {
		// A registered worktree at dir is half-made, broken or Reset:
		// git's own remove clears it, locked or not, present or not.
		if !o.Reset {
			res.Outcome = Recovered
		}
		if err := remove(ctx, repo, w.Path); err != nil {
			return res, err
		}
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !o.Reset {
		res.Outcome = Recovered
	}
	if err := deletable(repo, dir); err != nil {
		return res, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return res, err
	}
	if _, err := git.Run(ctx, repo, "worktree", "prune"); err != nil {
		return res, err
	}
	_, verr := git.Run(ctx, repo, "rev-parse", "--verify", "-q", "refs/heads/"+o.Branch)
	exists := verr == nil
	if exists {
		if wts, err = list(ctx, repo); err != nil {
			return res, err
		}
		if h, ok := holder(wts, o.Branch); ok && !samePath(h.Path, dir) {
			if !dead(h) {
				return res, fmt.Errorf("%w: %s is checked out at %s", ErrBranchHeld, o.Branch, h.Path)
			}
			if err := remove(ctx, repo, h.Path); err != nil {
				return res, fmt.Errorf("free %s from %s: %w", o.Branch, h.Path, err)
			}
			_ = os.RemoveAll(h.Path)
			res.Freed = h.Path
		}
	}
	var args []string
	switch {
	case exists && o.Reset && o.Start != "":
		args = []string{"worktree", "add", "-q", "-B", o.Branch, dir, o.Start}
	case exists:
		args = []string{"worktree", "add", "-q", dir, o.Branch}
	case o.Start == "":
		return res, fmt.Errorf("no branch %s to check out", o.Branch)
	default:
		args = []string{"worktree", "add", "-q", "-b", o.Branch, dir, o.Start}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return res, err
	}
	// Not cut short by a cancel: a worktree git stops making stays
	// half-made (the next Ensure recovers it, but it need not).
	if _, err := git.Run(context.WithoutCancel(ctx), repo, args...); err != nil {
		return res, err
	}
	if admin, ok := adminDir(dir); ok {
		_ = os.WriteFile(filepath.Join(admin, owner), []byte("ralph\n"), 0o644)
	}
	return res, nil
}

// Remove removes the worktree at dir (its files and git's record of it)
// and, when branch is not "", the branch. What is already gone is not an
// error.
func Remove(ctx context.Context, repo, dir, branch string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	l, err := lock(ctx, repo)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	defer l.unlock()
	if err := clearHalfMade(l.common, dir); err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	wts, err := list(ctx, repo)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	var rmErr error
	if w, ok := find(wts, dir); ok {
		rmErr = remove(ctx, repo, w.Path)
	}
	if err := deletable(repo, dir); err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, errors.Join(rmErr, err))
	}
	if _, err := git.Run(ctx, repo, "worktree", "prune"); err != nil {
		return fmt.Errorf("remove worktree %s: %w", dir, errors.Join(rmErr, err))
	}
	// git's remove failing matters no more once the files are gone and
	// the prune dropped its record.
	if branch != "" {
		if _, err := git.Run(ctx, repo, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err == nil {
			if _, err := git.Run(ctx, repo, "branch", "-D", "-q", branch); err != nil {
				return fmt.Errorf("remove worktree %s: %w", dir, err)
			}
		}
	}
	return nil
}

// Prune drops git's records of worktrees whose directories are gone, and
// the records a killed add left that git cannot read.
func Prune(ctx context.Context, repo string) error {
	l, err := lock(ctx, repo)
	if err != nil {
		return fmt.Errorf("prune worktrees: %w", err)
	}
	defer l.unlock()
	if err := clearHalfMade(l.common, ""); err != nil {
		return fmt.Errorf("prune worktrees: %w", err)
	}
	if _, err := git.Run(ctx, repo, "worktree", "prune"); err != nil {
		return fmt.Errorf("prune worktrees: %w", err)
	}
	return nil
}

// CheckedOut returns the worktree (the main one included) where branch
// is checked out, "" when none is.
func CheckedOut(ctx context.Context, repo, branch string) (string, error) {
	l, err := lock(ctx, repo)
	if err != nil {
		return "", err
	}
	defer l.unlock()
	if err := clearHalfMade(l.common, ""); err != nil {
		return "", err
	}
	wts, err := list(ctx, repo)
	if err != nil {
		return "", err
	}
	if w, ok := holder(wts, branch); ok {
		return w.Path, nil
	}
	return "", nil
}

// worktree is one entry of git worktree list --porcelain.
type worktree struct {
	Path   string
	Branch string // short name, "" when detached
	Locked bool
	Reason string // why it is locked
	Main   bool
}

func list(ctx context.Context, repo string) ([]worktree, error) {
	out, err := git.Run(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var ws []worktree
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "worktree "):
			ws = append(ws, worktree{Path: strings.TrimPrefix(l, "worktree "), Main: len(ws) == 0})
		case len(ws) == 0:
		case strings.HasPrefix(l, "branch refs/heads/"):
			ws[len(ws)-1].Branch = strings.TrimPrefix(l, "branch refs/heads/")
		case l == "locked" || strings.HasPrefix(l, "locked "):
			ws[len(ws)-1].Locked = true
			ws[len(ws)-1].Reason = strings.TrimPrefix(strings.TrimPrefix(l, "locked"), " ")
		}
	}
	return ws, nil
}

func find(ws []worktree, dir string) (worktree, bool) {
	for _, w := range ws {
		if !w.Main && samePath(w.Path, dir) {
			return w, true
		}
	}
	return worktree{}, false
}

func holder(ws []worktree, branch string) (worktree, bool) {
	for _, w := range ws {
		if w.Branch == branch {
			return w, true
		}
	}
	return worktree{}, false
}

// samePath compares two paths after resolving the symbolic links of what
// exists of them.
func samePath(a, b string) bool {
	return resolve(a) == resolve(b)
}

func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

// remove removes a worktree git records, locked or missing ones too.
func remove(ctx context.Context, repo, path string) error {
	if _, err := git.Run(ctx, repo, "worktree", "remove", "-f", "-f", path); err == nil {
		return nil
	}
	// git refuses a worktree whose .git file is gone or wrong: its files
	// go first, then git removes its record of a missing worktree.
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	_, err := git.Run(ctx, repo, "worktree", "remove", "-f", "-f", path)
	return err
}

// dead reports whether a worktree that holds a branch may be taken down
// to free it: never the main worktree or one the user locked; always one
// whose directory is gone or that git left half-made; and one ralph made
// when no live ralph works in it.
func dead(w worktree) bool {
	switch {
	case w.Main:
		return false
	case w.Locked && w.Reason != initializing:
		return false
	case w.Locked:
		return true
	}
	if _, err := os.Stat(w.Path); errors.Is(err, os.ErrNotExist) {
		return true
	}
	admin, ok := adminDir(w.Path)
	if !ok {
		return false
	}
	if _, err := os.Stat(filepath.Join(admin, owner)); err != nil {
		return false // not ralph's
	}
	return (&workspace.Workspace{Root: w.Path}).HolderPID() == 0
}

// initializing is what git writes in a worktree's lock file while it adds
// the worktree (in the C locale, which package git sets).
const initializing = "initializing"

// deletable refuses to let dir be deleted when it is, or holds, the
// repository itself or another repository (a .git directory, not a
// worktree's .git file): a wrong path must never cost the user a clone.
func deletable(repo, dir string) error {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	top, d := real(repo), real(dir)
	if rel, err := filepath.Rel(d, top); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return fmt.Errorf("%s is the repository or holds it: not a worktree to delete", dir)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a repository of its own (it has a .git directory): not a worktree to delete", dir)
	}
	return nil
}

// state is what is at a worktree's path.
type state int

const (
	absent state = iota // no worktree there
	whole               // a worktree git finished making
	broken              // a worktree left half-made, or whose record is gone
)

func health(dir string) state {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return absent
	}
	admin, ok := adminDir(dir)
	if !ok {
		return broken
	}
	if _, err := os.Stat(filepath.Join(admin, "HEAD")); err != nil {
		return broken
	}
	if lock, err := os.ReadFile(filepath.Join(admin, "locked")); err == nil && strings.TrimSpace(string(lock)) == initializing {
		return broken
	}
	return whole
}

// adminDir is the worktree's administrative directory in the main
// repository (.git/worktrees/<name>), read from its .git file.
func adminDir(dir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", false
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return "", false
	}
	return p, true
}

// clearHalfMade removes, from the repository's common git directory,
// the worktree records (worktrees/<name>/) a `git worktree add` killed
// early leaves and git can neither use nor prune. git writes a record's
// locked ("initializing"), gitdir, the worktree's .git file, HEAD and
// commondir in that order, and its prune keeps every locked record. Two
// kinds go:
//
//   - a record whose commondir is an empty file (git was killed as it
//     wrote it): every git command that reads the list of worktrees then
//     dies ("failed to read .../commondir"), so no worktree of the
//     repository can be listed, added or removed while it is there; it
//     goes whatever its name (a git making a record leaves its commondir
//     empty only between making the file and writing its five bytes);
//   - a record with no commondir and no gitdir, or an empty one (git was
//     killed before it wrote them): git does not list it, nothing can use
//     it, and an add at the same path takes the next name instead
//     (task-11 for task-1). Only records named for dir go, under its base
//     name or that name with git's number after it (git changes a name
//     with characters a ref cannot hold; ralph's have none): a record of
//     another name may be one a git outside ralph is making at this
//     moment.
//
// A record git lists is left to git (ensure and remove). dir is the
// worktree the caller is about to make or remove, "" when none. Only real
// directories right under worktrees/ are removed; symbolic links are not
// followed. The caller holds the repository's lock.
func clearHalfMade(common, dir string) error {
	root := filepath.Join(common, "worktrees")
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		return nil // no linked worktree yet, or not git's own directory
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		admin := filepath.Join(root, e.Name())
		if fi, err := os.Lstat(admin); err != nil || !fi.IsDir() {
			continue
		}
		commondir, gitdir := written(filepath.Join(admin, "commondir")), written(filepath.Join(admin, "gitdir"))
		unreadable := commondir == emptyFile
		unlisted := commondir == noFile && gitdir != filled
		if !unreadable && !(unlisted && dir != "" && namedFor(e.Name(), filepath.Base(dir))) {
			continue
		}
		if err := os.RemoveAll(admin); err != nil {
			return err
		}
	}
	return nil
}

// clearBranchLock removes the lock on branch, one of ralph's (under
// ralph/), that a git killed as it wrote the branch left: `git worktree
// add -b` makes the branch with a `git branch` of its own, and a kill of
// ralph's process group ends that too; every later add then fails on the
// lock ("remove the file manually to continue"). It is removed as
// git.RemoveStaleLockFile removes a lock: once it has stood longer than
// a git holds one and no git runs in the repository. The caller holds
// the worktree lock, so no ralph makes the branch meanwhile.
func clearBranchLock(ctx context.Context, common, branch string) error {
	if !strings.HasPrefix(branch, "ralph/") || strings.Contains(branch, "..") {
		return nil
	}
	lock := filepath.Join(common, "refs", "heads", filepath.FromSlash(branch)+".lock")
	if _, err := os.Lstat(lock); err != nil {
		return nil
	}
	git.RemoveStaleLockFile(ctx, lock, time.Time{})
	return ctx.Err()
}

// fill is how much of one of a record's files git wrote.
type fill int

const (
	noFile    fill = iota // not there
	emptyFile             // an empty regular file
	filled                // anything else (content, a link, one unreadable)
)

// written says how much git wrote of the file at path.
func written(path string) fill {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return noFile
	case err == nil && fi.Mode().IsRegular() && fi.Size() == 0:
		return emptyFile
	}
	return filled
}

// namedFor reports whether git may have named a worktree record name for
// a worktree whose directory's base name is base: base itself, or base
// with a number after it when a record of that name was there already.
func namedFor(name, base string) bool {
	n, ok := strings.CutPrefix(name, base)
	if !ok {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Target is the branch HEAD is on in the repository at root: the branch a
// task started from HEAD lands on. It fails when HEAD is detached or its
// branch has no commit yet.
func Target(ctx context.Context, root string) (string, error) {
	target, err := git.Line(ctx, root, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return "", errors.New("HEAD is not on a branch (the task lands on the branch it starts on)")
	}
	if _, err := git.Run(ctx, root, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return "", fmt.Errorf("%s has no commit yet", target)
	}
	return target, nil
}

// CommitWork commits every change in the worktree at dir with message,
// when there is one, except ralph's own .ralph/ files: they are no part of
// a task's work even where the repository tracks them, and committed they
// would land on the bookkeeping ralph keeps in the main tree.
// A lock a git killed with its ralph left is removed (git.RunUnlocking).
func CommitWork(ctx context.Context, dir, message string) error {
	if _, err := git.RunUnlocking(ctx, dir, time.Time{}, "add", "-A", "--", ".", ":(exclude)"+workspace.Dir); err != nil {
		return err
	}
	if _, err := git.Run(ctx, dir, "diff", "--cached", "--quiet"); err == nil {
		return nil
	}
	_, err := git.RunUnlocking(ctx, dir, time.Time{}, "commit", "-q", "-m", message)
	return err
}

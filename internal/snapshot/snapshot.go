// Package snapshot saves and restores the whole working tree of a git
// repository without touching the user's branch, HEAD, index, stash or tags.
//
// A snapshot is a commit reachable from refs/ralph/snapshots/<name>. It is
// built with a private index file kept in the repository's git directory
// (.git/ralph/index): `git status` against that index names the files
// changed since; when they are a few, the tree is the index's own (its
// cache tree) with those files hashed and the trees above them written,
// leaving the index as it was; else they are staged into it (`git add
// -A`, only files changed since the last save rehashed) and `git
// write-tree` writes it. Then `git commit-tree` with the previous
// snapshot as parent (refs/ralph/tip), and one `git update-ref`
// transaction. Snapshots hold tracked, untracked and .ralph/ files; they leave
// out ignored files and ralph's private files (workspace.Private: the
// database, lock, logs, worktrees…), which are excluded explicitly even when
// no .gitignore lists them.
//
// Rollback first saves the current tree as rollback-<unix>, then makes the
// working tree equal to the target snapshot with `git read-tree -m -u`
// from that tree on the private index: changed files are rewritten, files
// added since are removed, ignored and private files are left alone.
// Ignored files that stand where the target needs a file or directory are
// saved in the rollback snapshot before they are replaced, so no file is
// lost.
//
// Every git call is an argv (never a shell string) with an environment of
// its own: a ralph author and committer identity, C locale, the private index.
// Writes to one repository are serialised by a mutex within the process and
// by git's own lock files across processes.
package snapshot

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// RefPrefix is the ref namespace snapshots live in. Refs there are not
// branches or tags: `git push` and `git push --tags` leave them alone.
const RefPrefix = "refs/ralph/snapshots/"

// TipRef points at the newest snapshot commit, the parent of the next one.
const TipRef = "refs/ralph/tip"

// Snapshot is one saved state of the working tree: what the store records.
type Snapshot struct {
	Name    string    `json:"name"`
	Commit  string    `json:"commit"`
	Tree    string    `json:"tree"`
	Kind    Kind      `json:"kind"`
	Task    int       `json:"task,omitempty"` // task number for task and stall snapshots
	Message string    `json:"message,omitempty"`
	Time    time.Time `json:"time"`
}

// ShortCommit returns the first twelve hex digits of the commit.
func (s Snapshot) ShortCommit() string {
	if len(s.Commit) > 12 {
		return s.Commit[:12]
	}
	return s.Commit
}

// Change is how a file differs between a snapshot and the working tree.
type Change string

// File-level changes, read from the snapshot to the working tree.
const (
	Added    Change = "added"    // in the working tree, not in the snapshot
	Modified Change = "modified" // in both, content or mode differs
	Deleted  Change = "deleted"  // in the snapshot, not in the working tree
)

// FileChange is one changed file, its path relative to the repository root
// with forward slashes.
type FileChange struct {
	Path   string `json:"path"`
	Change Change `json:"change"`
}

// Status is where the working tree stands relative to the snapshots.
type Status struct {
	// Current is the newest snapshot whose tree equals the working tree, or
	// "" when the tree matches none.
	Current string `json:"current,omitempty"`
	// Latest is the newest snapshot, "" when there is none.
	Latest string `json:"latest,omitempty"`
	// Changes counts files that differ from Latest (all files when there is
	// no snapshot yet).
	Changes int `json:"changes"`
	// LastTime is when Latest was taken; zero when there is none.
	LastTime time.Time `json:"last_time,omitzero"`
	// Count is the number of snapshots.
	Count int `json:"count"`
}

// ErrNotGitRepo means the directory is not inside a git working tree.
var ErrNotGitRepo = errors.New("not a git repository (or any parent directory)")

// ErrNoSuchSnapshot is matched (errors.Is) by every *UnknownSnapshotError.
var ErrNoSuchSnapshot = errors.New("no such snapshot")

// ErrSnapshotExists means Save was asked for a task or stall name that is
// already taken.
var ErrSnapshotExists = errors.New("snapshot already exists")

// ErrInvalidName means Save was given a name that is not one of NameForms.
var ErrInvalidName = errors.New("invalid snapshot name")

// UnknownSnapshotError is returned when a name does not denote a ralph
// snapshot: either it is not a snapshot name at all (Malformed) or no
// snapshot has that name. Valid lists the snapshots that exist, oldest first.
type UnknownSnapshotError struct {
	Name      string
	Malformed bool
	Valid     []string
}

func (e *UnknownSnapshotError) Error() string {
	var b strings.Builder
	if e.Malformed {
		fmt.Fprintf(&b, "%q is not a ralph snapshot name (names are %s)", e.Name, NameForms)
	} else {
		fmt.Fprintf(&b, "no snapshot named %q", e.Name)
	}
	if len(e.Valid) == 0 {
		b.WriteString("; there are no snapshots yet")
	} else {
		fmt.Fprintf(&b, "; valid snapshots: %s", strings.Join(e.Valid, ", "))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoSuchSnapshot) true.
func (e *UnknownSnapshotError) Is(target error) bool { return target == ErrNoSuchSnapshot }

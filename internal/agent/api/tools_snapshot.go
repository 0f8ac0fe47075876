package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/snapshot"
)

// maxSnapshots caps snapshot_list; the newest are shown.
const maxSnapshots = 100

// snapshotToolDefs are the tools over ralph's git snapshots. Rollback is
// left out on purpose: restoring a snapshot is the human's call.
var snapshotToolDefs = []toolDef{
	{
		Name:        "snapshot_save",
		Description: "Save the whole working tree as a ralph snapshot named manual-<unix time>, without touching git's branch, HEAD, index or stash. Take one before a risky change. Returns the snapshot's name.",
		Properties: map[string]any{
			"message": str("what the snapshot holds, e.g. \"before moving the router\" (optional)"),
		},
	},
	{
		Name:        "snapshot_list",
		Description: "List ralph's snapshots of the working tree, oldest first: name, short commit, time and message.",
		Properties:  map[string]any{},
	},
	{
		Name:        "snapshot_diff",
		Description: "List the files added, modified or deleted in the working tree since a snapshot (file names only, paths relative to the repository root).",
		Properties: map[string]any{
			"name": str("snapshot name, e.g. task-3-pre or manual-1767225600 (see snapshot_list)"),
		},
		Required: []string{"name"},
	},
}

func (t *toolbox) snapshots(ctx context.Context) (*snapshot.Repo, error) {
	r, err := snapshot.Open(ctx, t.ws.root, t.log)
	if errors.Is(err, snapshot.ErrNotGitRepo) {
		return nil, errors.New("the workspace is not in a git repository, and snapshots live in git")
	}
	if err != nil {
		return nil, fmt.Errorf("open snapshots: %v", err)
	}
	return r, nil
}

func (t *toolbox) snapshotSave(ctx context.Context, message string) (string, error) {
	r, err := t.snapshots(ctx)
	if err != nil {
		return "", err
	}
	s, err := r.Save(ctx, snapshot.Manual(time.Now()), message)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("saved %s (commit %s)", s.Name, s.ShortCommit()), nil
}

func (t *toolbox) snapshotList(ctx context.Context) (string, error) {
	r, err := t.snapshots(ctx)
	if err != nil {
		return "", err
	}
	ss, err := r.List(ctx)
	if err != nil {
		return "", err
	}
	if len(ss) == 0 {
		return "no snapshots yet; snapshot_save takes one", nil
	}
	var b strings.Builder
	if len(ss) > maxSnapshots {
		fmt.Fprintf(&b, "[%d older snapshots left out; the newest %d follow]\n", len(ss)-maxSnapshots, maxSnapshots)
		ss = ss[len(ss)-maxSnapshots:]
	}
	for _, s := range ss {
		msg, _, _ := strings.Cut(s.Message, "\n")
		fmt.Fprintf(&b, "%s  %s  %s  %s\n", s.Name, s.ShortCommit(), s.Time.UTC().Format(time.DateTime+"Z"), msg)
	}
	return b.String(), nil
}

func (t *toolbox) snapshotDiff(ctx context.Context, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", errors.New("name is empty: give a snapshot name (snapshot_list lists them)")
	}
	r, err := t.snapshots(ctx)
	if err != nil {
		return "", err
	}
	changes, err := r.Diff(ctx, name)
	if err != nil {
		return "", err
	}
	if len(changes) == 0 {
		return fmt.Sprintf("no changes since %s", name), nil
	}
	var b strings.Builder
	counts := map[snapshot.Change]int{}
	for i, c := range changes {
		if i < maxListEntries {
			fmt.Fprintf(&b, "%-9s %s\n", c.Change, c.Path)
		}
		counts[c.Change]++
	}
	if len(changes) > maxListEntries {
		fmt.Fprintf(&b, "[listing cut at %d files]\n", maxListEntries)
	}
	fmt.Fprintf(&b, "%d files changed since %s (%d added, %d modified, %d deleted)\n",
		len(changes), name, counts[snapshot.Added], counts[snapshot.Modified], counts[snapshot.Deleted])
	return b.String(), nil
}

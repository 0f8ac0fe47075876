package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/workspace"
)

func newSnapshotCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save, list, diff and roll back snapshots of the working tree",
		Long: `A snapshot is the whole working tree — tracked, untracked and .ralph/
files, but not ignored files or ralph's database, lock and logs — saved
as a commit under refs/ralph/snapshots/. Saving and rolling back never
move your branch, HEAD or index and never create tags.

ralph takes task-N-pre before task N, task-N-post when it passes its gates
and stall-N-recovery before stall recovery; save takes manual-<unix>.
A rollback first saves the current tree as rollback-<unix>, so it can be
undone by rolling back to that.`,
	}
	cmd.AddCommand(
		newSnapshotSaveCommand(g),
		newSnapshotListCommand(g),
		newSnapshotRollbackCommand(g),
		newSnapshotDiffCommand(g),
		newSnapshotStatusCommand(g),
	)
	return cmd
}

// openSnapshots opens the snapshot store of the working tree at g.Dir.
func openSnapshots(ctx context.Context, g *Globals) (*snapshot.Repo, error) {
	r, err := snapshot.Open(ctx, g.Dir, g.Logger)
	if errors.Is(err, snapshot.ErrNotGitRepo) {
		return nil, failure.New(failure.Failed, err)
	}
	return r, err
}

// withSnapshots calls fn with the snapshot store of the working tree at
// g.Dir.
func withSnapshots(ctx context.Context, g *Globals, fn func(r *snapshot.Repo) error) error {
	r, err := openSnapshots(ctx, g)
	if err != nil {
		return err
	}
	return fn(r)
}

// snapshotError gives an unknown snapshot name exit status 1.
func snapshotError(err error) error {
	if errors.Is(err, snapshot.ErrNoSuchSnapshot) {
		return failure.New(failure.Failed, err)
	}
	return err
}

func newSnapshotSaveCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "save [MESSAGE]",
		Short: "Save the working tree as manual-<unix>",
		Long: `Save the working tree as a snapshot named manual-<unix> (with a -2, -3…
suffix when one was already taken that second). The words of MESSAGE
become the snapshot's message. Prints the name and short commit.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotSave(cmd.Context(), g, strings.Join(args, " "))
		},
	}
}

func runSnapshotSave(ctx context.Context, g *Globals, message string) error {
	r, err := openSnapshots(ctx, g)
	if err != nil {
		return err
	}
	s, err := r.Save(ctx, snapshot.Manual(time.Now()), message)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "saved %s %s\n", s.Name, s.ShortCommit())
	return nil
}

// SnapshotJSONOptions are the flags of the snapshot commands that can print
// JSON.
type SnapshotJSONOptions struct {
	JSON bool
}

// AddFlags registers the options' flags on cmd.
func (o *SnapshotJSONOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
}

func newSnapshotListCommand(g *Globals) *cobra.Command {
	var opts SnapshotJSONOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the snapshots, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSnapshots(cmd.Context(), g, func(r *snapshot.Repo) error { return snapshot.PrintList(cmd.Context(), g.Stdout, r, opts.JSON) })
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func newSnapshotRollbackCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "rollback NAME",
		Short: "Restore the working tree to a snapshot (saving the current tree first)",
		Long: `Make the working tree exactly the snapshot NAME: changed files are
restored, files added since are removed, ignored files and ralph's
database and logs are kept. The current tree is saved first as
rollback-<unix>; roll back to that to undo.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotRollback(cmd.Context(), g, args[0])
		},
	}
}

func runSnapshotRollback(ctx context.Context, g *Globals, name string) error {
	r, err := openSnapshots(ctx, g)
	if err != nil {
		return err
	}
	// A rollback under a running task would rewind the tree beneath its
	// agent and leave .ralph/ disagreeing with the store: refuse, as the
	// dashboard does, naming the run.
	ws, err := workspace.Open(ctx, r.Root())
	if err != nil {
		return err
	}
	lock, err := ws.Lock()
	if err != nil {
		return failure.New(failure.Failed, fmt.Errorf("cannot roll back while a run drives this workspace: %w", err))
	}
	defer lock.Release()
	undo, err := r.Rollback(ctx, name)
	if err != nil {
		return snapshotError(err)
	}
	fmt.Fprintf(g.Stdout, "rolled back to %s\nthe previous state is saved as %s; to undo:\n  ralph snapshot rollback %s\n", name, undo.Name, undo.Name)
	return nil
}

func newSnapshotDiffCommand(g *Globals) *cobra.Command {
	var opts SnapshotJSONOptions
	cmd := &cobra.Command{
		Use:   "diff NAME",
		Short: "List the files added, modified or deleted since a snapshot",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSnapshots(cmd.Context(), g, func(r *snapshot.Repo) error {
				return snapshot.PrintDiff(cmd.Context(), g.Stdout, r, args[0], opts.JSON)
			})
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func newSnapshotStatusCommand(g *Globals) *cobra.Command {
	var opts SnapshotJSONOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show which snapshot the tree matches and how much changed since the latest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSnapshots(cmd.Context(), g, func(r *snapshot.Repo) error { return snapshot.PrintStatus(cmd.Context(), g.Stdout, r, opts.JSON) })
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

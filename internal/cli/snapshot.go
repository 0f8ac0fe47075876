package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/snapshot"
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

func writeSnapshotJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newSnapshotListCommand(g *Globals) *cobra.Command {
	var opts SnapshotJSONOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the snapshots, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotList(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func runSnapshotList(ctx context.Context, g *Globals, opts SnapshotJSONOptions) error {
	r, err := openSnapshots(ctx, g)
	if err != nil {
		return err
	}
	ss, err := r.List(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		if ss == nil {
			ss = []snapshot.Snapshot{}
		}
		return writeSnapshotJSON(g.Stdout, ss)
	}
	if len(ss) == 0 {
		fmt.Fprintln(g.Stdout, "no snapshots yet; ralph snapshot save [MESSAGE] takes one")
		return nil
	}
	tw := tabwriter.NewWriter(g.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCOMMIT\tTIME\tMESSAGE")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.ShortCommit(), s.Time.Local().Format(time.DateTime), snapshotFirstLine(s.Message))
	}
	return tw.Flush()
}

func snapshotFirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
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
			return runSnapshotDiff(cmd.Context(), g, args[0], opts)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// snapshotDiffJSON is the JSON form of ralph snapshot diff.
type snapshotDiffJSON struct {
	Snapshot string                `json:"snapshot"`
	Changes  []snapshot.FileChange `json:"changes"`
}

func runSnapshotDiff(ctx context.Context, g *Globals, name string, opts SnapshotJSONOptions) error {
	r, err := openSnapshots(ctx, g)
	if err != nil {
		return err
	}
	changes, err := r.Diff(ctx, name)
	if err != nil {
		return snapshotError(err)
	}
	if opts.JSON {
		if changes == nil {
			changes = []snapshot.FileChange{}
		}
		return writeSnapshotJSON(g.Stdout, snapshotDiffJSON{Snapshot: name, Changes: changes})
	}
	if len(changes) == 0 {
		fmt.Fprintf(g.Stdout, "no changes since %s\n", name)
		return nil
	}
	counts := map[snapshot.Change]int{}
	for _, c := range changes {
		fmt.Fprintf(g.Stdout, "%-9s %s\n", c.Change, c.Path)
		counts[c.Change]++
	}
	fmt.Fprintf(g.Stdout, "%d %s changed since %s (%d added, %d modified, %d deleted)\n",
		len(changes), snapshotPlural(len(changes), "file", "files"), name,
		counts[snapshot.Added], counts[snapshot.Modified], counts[snapshot.Deleted])
	return nil
}

func snapshotPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func newSnapshotStatusCommand(g *Globals) *cobra.Command {
	var opts SnapshotJSONOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show which snapshot the tree matches and how much changed since the latest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotStatus(cmd.Context(), g, opts)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

func runSnapshotStatus(ctx context.Context, g *Globals, opts SnapshotJSONOptions) error {
	r, err := openSnapshots(ctx, g)
	if err != nil {
		return err
	}
	st, err := r.Status(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeSnapshotJSON(g.Stdout, st)
	}
	if st.Count == 0 {
		fmt.Fprintf(g.Stdout, "no snapshots yet; %d %s would be saved\n", st.Changes, snapshotPlural(st.Changes, "file", "files"))
		return nil
	}
	current := st.Current
	if current == "" {
		current = "none (the working tree matches no snapshot)"
	}
	fmt.Fprintf(g.Stdout, "current:   %s\n", current)
	fmt.Fprintf(g.Stdout, "latest:    %s at %s\n", st.Latest, st.LastTime.Local().Format(time.DateTime))
	fmt.Fprintf(g.Stdout, "changes:   %d %s differ from %s\n", st.Changes, snapshotPlural(st.Changes, "file", "files"), st.Latest)
	fmt.Fprintf(g.Stdout, "snapshots: %d\n", st.Count)
	return nil
}

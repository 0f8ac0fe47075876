package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ralph-harness/ralph/internal/failure"
)

func writeSnapshotJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// PrintList prints r's snapshots, oldest first, as ralph snapshot list
// does, as JSON with asJSON.
func PrintList(ctx context.Context, w io.Writer, r *Repo, asJSON bool) error {
	ss, err := r.List(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if ss == nil {
			ss = []Snapshot{}
		}
		return writeSnapshotJSON(w, ss)
	}
	if len(ss) == 0 {
		fmt.Fprintln(w, "no snapshots yet; ralph snapshot save [MESSAGE] takes one")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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

// snapshotDiffJSON is the JSON form of ralph snapshot diff.
type snapshotDiffJSON struct {
	Snapshot string       `json:"snapshot"`
	Changes  []FileChange `json:"changes"`
}

// PrintDiff prints the files added, modified or deleted since snapshot
// name, as JSON with asJSON; an unknown name is a failure.Failed error.
func PrintDiff(ctx context.Context, w io.Writer, r *Repo, name string, asJSON bool) error {
	changes, err := r.Diff(ctx, name)
	if err != nil {
		return unknownName(err)
	}
	if asJSON {
		if changes == nil {
			changes = []FileChange{}
		}
		return writeSnapshotJSON(w, snapshotDiffJSON{Snapshot: name, Changes: changes})
	}
	if len(changes) == 0 {
		fmt.Fprintf(w, "no changes since %s\n", name)
		return nil
	}
	counts := map[Change]int{}
	for _, c := range changes {
		fmt.Fprintf(w, "%-9s %s\n", c.Change, c.Path)
		counts[c.Change]++
	}
	fmt.Fprintf(w, "%d %s changed since %s (%d added, %d modified, %d deleted)\n",
		len(changes), snapshotPlural(len(changes), "file", "files"), name,
		counts[Added], counts[Modified], counts[Deleted])
	return nil
}

func snapshotPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PrintStatus prints where the working tree stands against r's
// snapshots, as JSON with asJSON.
func PrintStatus(ctx context.Context, w io.Writer, r *Repo, asJSON bool) error {
	st, err := r.Status(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeSnapshotJSON(w, st)
	}
	if st.Count == 0 {
		fmt.Fprintf(w, "no snapshots yet; %d %s would be saved\n", st.Changes, snapshotPlural(st.Changes, "file", "files"))
		return nil
	}
	current := st.Current
	if current == "" {
		current = "none (the working tree matches no snapshot)"
	}
	fmt.Fprintf(w, "current:   %s\n", current)
	fmt.Fprintf(w, "latest:    %s at %s\n", st.Latest, st.LastTime.Local().Format(time.DateTime))
	fmt.Fprintf(w, "changes:   %d %s differ from %s\n", st.Changes, snapshotPlural(st.Changes, "file", "files"), st.Latest)
	fmt.Fprintf(w, "snapshots: %d\n", st.Count)
	return nil
}

// unknownName makes an unknown snapshot name a failure.Failed error.
func unknownName(err error) error {
	if errors.Is(err, ErrNoSuchSnapshot) {
		return failure.New(failure.Failed, err)
	}
	return err
}

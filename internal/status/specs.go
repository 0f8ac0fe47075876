package status

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// WorktreeSpecs returns the specs a parallel run has in worktrees: not
// landed, not given up.
func WorktreeSpecs(ctx context.Context, st *store.Store) ([]store.SpecRecord, error) {
	all, err := st.Specs(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.SpecRecord
	for _, r := range all {
		if r.Worktree == "" || r.State == spec.StateDone || r.State == spec.StateFailed || r.State == spec.StateConflict {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// PrintSpecs prints one line per spec a parallel run has in a
// worktree, under ralph status.
func PrintSpecs(w io.Writer, ws *workspace.Workspace, r Report) {
	if len(r.Specs) == 0 {
		return
	}
	state := "interrupted — continue with `ralph specs run --parallel N`"
	if r.Running {
		state = fmt.Sprintf("running (pid %d)", r.PID)
	}
	fmt.Fprintf(w, "specs run: %s, %d specs in worktrees\n", state, len(r.Specs))
	for _, s := range r.Specs {
		wt := s.Worktree
		if rel, err := filepath.Rel(ws.Root, wt); err == nil {
			wt = rel
		}
		fmt.Fprintf(w, "  %-28s %-13s %s (%s)\n", s.ID, s.State, progress.OneLine(s.LastResult, 60), wt)
	}
}

// SpecCalls prints the spec pipeline's agent calls and landings, as
// they start and end, each with its spec and worktree; with follow it
// goes on until no ralph holds the workspace.
func SpecCalls(ctx context.Context, w io.Writer, ws *workspace.Workspace, st *store.Store, follow bool) error {
	printed := map[int64]int{} // call id → 1 start printed, 2 end printed
	var open int64             // the lowest id whose end is not printed
	for {
		calls, err := st.SpecCalls(ctx, open)
		if err != nil {
			return err
		}
		next := int64(-1)
		for _, c := range calls {
			wt := c.Worktree
			if rel, err := filepath.Rel(ws.Root, wt); err == nil && wt != "" {
				wt = rel
			}
			if printed[c.ID] == 0 {
				fmt.Fprintf(w, "%s [%s] %s attempt %d started in %s\n", c.StartedAt.Local().Format("15:04:05"), c.SpecID, c.Role, c.Attempt, orDot(wt))
				printed[c.ID] = 1
			}
			if printed[c.ID] == 1 && !c.EndedAt.IsZero() {
				fmt.Fprintf(w, "%s [%s] %s attempt %d ended: %s\n", c.EndedAt.Local().Format("15:04:05"), c.SpecID, c.Role, c.Attempt, progress.OneLine(c.Outcome, 100))
				printed[c.ID] = 2
			}
			if printed[c.ID] != 2 && next < 0 {
				next = c.ID - 1
			}
			if next < 0 {
				open = c.ID
			}
		}
		if next >= 0 {
			open = next
		}
		if !follow || ws.HolderPID() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}

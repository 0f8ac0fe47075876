package status

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/serve"
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

// SpecRows is one row per spec of layout, as ralph specs status and the
// dashboard show them.
func SpecRows(ctx context.Context, ws *workspace.Workspace, layout spec.Layout) ([]serve.SpecRow, error) {
	specs, err := layout.Discover()
	if err != nil {
		return nil, failure.New(failure.Usage, err)
	}
	records := map[string]store.SpecRecord{}
	if _, err := os.Stat(ws.Path(workspace.Database)); err == nil {
		st, err := store.Open(ctx, ws.Path(workspace.Database))
		if err != nil {
			return nil, err
		}
		defer st.Close()
		all, err := st.Specs(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			records[r.ID] = r
		}
	}
	running := ws.HolderPID() != 0
	rows := make([]serve.SpecRow, 0, len(specs))
	for _, s := range specs {
		fs, err := layout.Inspect(s)
		if err != nil {
			return nil, err
		}
		rec := records[s.Rel]
		if rec.Worktree != "" && fs.State != spec.StateDone {
			// A parallel run keeps the spec's files in its worktree.
			if wl, err := spec.NewLayout(rec.Worktree, filepath.Join(rec.Worktree, layout.RootRel(layout.Dir))); err == nil {
				if _, err := os.Stat(wl.Root); err == nil {
					if wfs, err := wl.Inspect(s); err == nil {
						if wfs.State == spec.StateDone {
							wfs.State = spec.StateLanding // done there, not landed yet
						}
						fs = wfs
					}
				}
			}
		}
		row := serve.SpecRow{Spec: s.Rel, State: fs.State, PlanAttempt: fs.PlanAttempt, ImplAttempts: rec.ImplAttempts, LastResult: rec.LastResult, CostUSD: rec.CostUSD}
		if rec.Worktree != "" && rec.State != spec.StateDone {
			row.Worktree, row.Branch = layout.RootRel(rec.Worktree), rec.Branch
		}
		if row.PlanAttempt == 0 {
			row.PlanAttempt = rec.PlanAttempt
		}
		switch {
		case fs.State == spec.StateDone:
		case rec.State == spec.StateFailed, rec.State == spec.StateConflict:
			row.State = rec.State
		case running && (rec.State == spec.StatePlanning || rec.State == spec.StateImplementing || rec.State == spec.StateVerifying || rec.State == spec.StateLanding):
			row.State = rec.State
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// PrintSpecsSummary prints how a spec run ended: counts, cost, the
// specs that failed and those that could not land.
func PrintSpecsSummary(w io.Writer, rep spec.Report) {
	counts := map[spec.Outcome]int{}
	var cost float64
	for _, r := range rep.Results {
		counts[r.Outcome]++
		cost += r.CostUSD
	}
	conflicts := ""
	if n := counts[spec.Conflict]; n > 0 {
		conflicts = fmt.Sprintf(", %d conflict", n)
	}
	fmt.Fprintf(w, "\nspecs: %d done, %d failed, %d skipped%s (cost $%.2f)\n", counts[spec.Done], counts[spec.Failed], counts[spec.Skipped], conflicts, cost)
	if failed := rep.Failed(); len(failed) > 0 {
		fmt.Fprintln(w, "failed:")
		for _, r := range failed {
			fmt.Fprintf(w, "  %s: %s\n", r.Spec.Rel, r.Reason)
			if r.Logs != "" {
				fmt.Fprintf(w, "    logs: %s\n", r.Logs)
			}
		}
	}
	if c := rep.Conflicts(); len(c) > 0 {
		fmt.Fprintln(w, "could not land:")
		for _, r := range c {
			fmt.Fprintf(w, "  %s: %s\n", r.Spec.Rel, r.Reason)
		}
	}
}

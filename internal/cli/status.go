package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// statusReport is what ralph status shows.
type statusReport struct {
	Task       store.Task           `json:"task"`
	Phase      string               `json:"phase"`
	StatusFile string               `json:"status_file"`
	Iteration  int                  `json:"iteration"`
	Running    bool                 `json:"running"`
	PID        int                  `json:"pid,omitempty"`
	Gates      []store.GateResult   `json:"last_gates,omitempty"`
	Steps      []store.StepRecord   `json:"steps,omitempty"`
	Pending    []store.HumanRequest `json:"pending,omitempty"`
	ToolCalls  int                  `json:"tool_calls"`
	Totals     totals               `json:"all_tasks"`
	// Plan is the check of .ralph/plan.tsx as it is now; nil without one.
	Plan *planStatus `json:"plan,omitempty"`
	// Worktree and Branch are where a ralph run --worktree task runs; its
	// phase, iteration and plan are read from there.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	// NotLanded says the worktree task completed but has not landed yet.
	NotLanded bool `json:"not_landed,omitempty"`
	// Specs are the specs a parallel spec run has in its worktrees.
	Specs []store.SpecRecord `json:"specs,omitempty"`
}

// planStatus is how the plan checks, as ralph plan validate sees it.
type planStatus struct {
	Valid    bool           `json:"valid"`
	Failures []plan.Finding `json:"failures"`
	Warnings []plan.Finding `json:"warnings"`
}

// checkPlan validates the workspace's plan against the recipes visible
// from it; nil when there is no plan.
func checkPlan(ctx context.Context, ws *workspace.Workspace) *planStatus {
	content := ws.PlanContent()
	if content == "" {
		return nil
	}
	reg := plan.DefaultRegistries()
	if lib, err := recipe.Load(ctx, ws.Root); err == nil {
		reg = plancontext.Registries(lib)
	}
	_, res := plan.Check(workspace.Plan, []byte(content), reg)
	return &planStatus{Valid: res.OK(), Failures: nonNil(res.Failures), Warnings: nonNil(res.Warnings)}
}

type totals struct {
	Tasks        int     `json:"tasks"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

func newStatusCommand(g *Globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show where the current task stands",
		Long:  "Show the current task: its phase, iteration, last gate results, cost and\nwhether a run is active. Works while a run is going. A ralph run --worktree\ntask shows its worktree's state and names its worktree and branch.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, st, err := openRunStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := buildStatus(ctx, ws, st)
			specs, serr := worktreeSpecs(ctx, st)
			if serr != nil {
				return serr
			}
			if err != nil {
				var ee *failure.Error
				if !errors.As(err, &ee) || len(specs) == 0 {
					return err
				}
				// Only a parallel spec run so far: show its specs.
				rep = statusReport{Running: ws.HolderPID() != 0, PID: ws.HolderPID(), Specs: specs}
				if asJSON {
					enc := json.NewEncoder(g.Stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(rep)
				}
				printWorktreeSpecs(g, ws, rep)
				return nil
			}
			rep.Specs = specs
			if asJSON {
				enc := json.NewEncoder(g.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printStatus(g, rep)
			printWorktreeSpecs(g, ws, rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func buildStatus(ctx context.Context, ws *workspace.Workspace, st *store.Store) (statusReport, error) {
	t, err := st.LatestTask(ctx)
	if errors.Is(err, store.ErrNoTask) {
		return statusReport{}, failure.New(failure.Failed, err)
	}
	if err != nil {
		return statusReport{}, err
	}
	// A ralph run --worktree task keeps its state files in its worktree.
	tws := ws
	var wt *worktreeTask
	if rec, err := currentWorktreeTask(ctx, ws, st); err == nil && rec != nil {
		if id, ok := rec.taskID(ctx, st); ok && id == t.ID {
			wt = rec
			if ok, _ := workspace.Exists(filepath.Join(ws.Root, rec.Dir, workspace.Dir)); ok {
				tws = &workspace.Workspace{Root: filepath.Join(ws.Root, rec.Dir)}
			}
		}
	}
	rep := statusReport{Task: t, Phase: tws.Phase(), StatusFile: tws.Status(), Iteration: tws.Int(workspace.Iteration)}
	if wt != nil {
		rep.Worktree, rep.Branch, rep.NotLanded = wt.Dir, wt.Branch, wt.Landing
	}
	if pid := ws.HolderPID(); pid != 0 {
		rep.Running, rep.PID = true, pid
	}
	gates, err := st.GateResults(ctx, t.ID)
	if err != nil {
		return rep, err
	}
	if len(gates) > 0 {
		last := gates[len(gates)-1].Iteration
		for _, gr := range gates {
			if gr.Iteration == last {
				rep.Gates = append(rep.Gates, gr)
			}
		}
	}
	rep.Plan = checkPlan(ctx, tws)
	if rep.Steps, err = st.Steps(ctx, t.ID); err != nil {
		return rep, err
	}
	if rep.Pending, err = st.PendingHumanRequests(ctx); err != nil {
		return rep, err
	}
	its, err := st.Iterations(ctx, t.ID)
	if err != nil {
		return rep, err
	}
	for _, it := range its {
		rep.ToolCalls += it.ToolCalls
	}
	if wt != nil && tws == ws && len(its) > 0 {
		// The worktree is gone (a landing that failed): the store knows.
		rep.Iteration = its[len(its)-1].Number
		rep.Phase, rep.StatusFile = "landing", "complete"
	}
	all, err := st.Tasks(ctx)
	if err != nil {
		return rep, err
	}
	for _, x := range all {
		rep.Totals.Tasks++
		rep.Totals.CostUSD += x.CostUSD
		rep.Totals.InputTokens += x.InputTokens
		rep.Totals.OutputTokens += x.OutputTokens
	}
	return rep, nil
}

func printStatus(g *Globals, r statusReport) {
	t := r.Task
	state := "ended"
	switch {
	case r.Running:
		state = fmt.Sprintf("running (pid %d)", r.PID)
	case t.Status == store.TaskInterrupted || t.Status == store.TaskRunning:
		state = "interrupted — continue with `ralph resume`"
	}
	fmt.Fprintf(g.Stdout, "task %d: %s\n", t.Number, trimOneLine(t.Message, 100))
	fmt.Fprintf(g.Stdout, "  state:      %s\n", state)
	if t.Status == store.TaskDone {
		fmt.Fprintf(g.Stdout, "  ended:      %s — %s\n", t.Reason, t.Detail)
	}
	if r.Worktree != "" {
		fmt.Fprintf(g.Stdout, "  worktree:   %s on branch %s\n", r.Worktree, r.Branch)
		if r.NotLanded {
			fmt.Fprintf(g.Stdout, "  landing:    not landed yet — ralph resume lands it\n")
		}
	}
	fmt.Fprintf(g.Stdout, "  type:       %s\n", t.Type)
	fmt.Fprintf(g.Stdout, "  agent:      %s\n", t.Agent)
	fmt.Fprintf(g.Stdout, "  phase:      %s (status.txt: %s)\n", r.Phase, r.StatusFile)
	fmt.Fprintf(g.Stdout, "  iteration:  %d (%d tool calls)\n", r.Iteration, r.ToolCalls)
	end := t.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	fmt.Fprintf(g.Stdout, "  elapsed:    %s\n", end.Sub(t.StartedAt).Round(time.Second))
	fmt.Fprintf(g.Stdout, "  cost:       $%.4f (%d input / %d output tokens)\n", t.CostUSD, t.InputTokens, t.OutputTokens)
	if p := r.Plan; p != nil {
		switch {
		case !p.Valid:
			fmt.Fprintf(g.Stdout, "  plan:       %s, %s (ralph plan validate)\n", plural(len(p.Failures), "failure"), plural(len(p.Warnings), "warning"))
			for _, f := range p.Failures {
				fmt.Fprintf(g.Stdout, "              %s\n", f.Format("FAIL", workspace.Plan))
			}
		case len(p.Warnings) > 0:
			fmt.Fprintf(g.Stdout, "  plan:       valid, %s\n", plural(len(p.Warnings), "warning"))
		default:
			fmt.Fprintf(g.Stdout, "  plan:       valid\n")
		}
	}
	for i, gr := range r.Gates {
		label := "            "
		if i == 0 {
			label = "  gates:    "
		}
		fmt.Fprintf(g.Stdout, "%s %s %s\n", label, gr.Status, gr.Gate)
	}
	for i, sr := range r.Steps {
		label := "            "
		if i == 0 {
			label = "  steps:    "
		}
		name := sr.Name
		if sr.Kind != "phase" && sr.Phase != "" {
			name = sr.Phase + " › " + sr.Name
		}
		fmt.Fprintf(g.Stdout, "%s %-8s %-6s %s\n", label, sr.Status, sr.Kind, name)
	}
	for _, p := range r.Pending {
		fmt.Fprintf(g.Stdout, "  waiting:    request %d: %s — ralph approve %d / ralph reject %d\n", p.ID, trimOneLine(p.Prompt, 80), p.ID, p.ID)
	}
	if r.Totals.Tasks > 1 {
		fmt.Fprintf(g.Stdout, "  all tasks:  %d tasks, $%.4f (%d input / %d output tokens)\n", r.Totals.Tasks, r.Totals.CostUSD, r.Totals.InputTokens, r.Totals.OutputTokens)
	}
}

// Package status reads the store and the workspace to show where work
// stands: the current task (ralph status), its event stream (ralph log),
// and the specs and agent calls of a spec run.
package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// Report is what ralph status shows.
type Report struct {
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
	// Tampers counts the agent's changes to what is not its own that the
	// harness undid or held (ralph log shows each).
	Tampers int `json:"tampers"`
	// SandboxDenials counts the accesses the sandbox refused the agent,
	// as its tools reported them (ralph log shows each).
	SandboxDenials int    `json:"sandbox_denials"`
	Totals         Totals `json:"all_tasks"`
	// Plan is the check of .ralph/plan.tsx as it is now; nil without one.
	Plan *PlanStatus `json:"plan,omitempty"`
	// Worktree and Branch are where a ralph run --worktree task runs; its
	// phase, iteration and plan are read from there.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	// NotLanded says the worktree task completed but has not landed yet.
	NotLanded bool `json:"not_landed,omitempty"`
	// Specs are the specs a parallel spec run has in its worktrees.
	Specs []store.SpecRecord `json:"specs,omitempty"`
}

// PlanStatus is how the plan checks, as ralph plan validate sees it.
type PlanStatus struct {
	Valid    bool           `json:"valid"`
	Failures []plan.Finding `json:"failures"`
	Warnings []plan.Finding `json:"warnings"`
}

// CheckPlan validates the workspace's plan against the recipes visible
// from it; nil when there is no plan.
func CheckPlan(ctx context.Context, ws *workspace.Workspace) *PlanStatus {
	content := ws.PlanContent()
	if content == "" {
		return nil
	}
	reg := plan.DefaultRegistries()
	if lib, err := recipe.Load(ctx, ws.Root); err == nil {
		reg = plancontext.Registries(lib)
	}
	_, res := plan.Check(workspace.Plan, []byte(content), reg)
	return &PlanStatus{Valid: res.OK(), Failures: nonNil(res.Failures), Warnings: nonNil(res.Warnings)}
}

// Totals add up every task of the workspace.
type Totals struct {
	Tasks        int     `json:"tasks"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

// Worktree is where a ralph run --worktree task runs, relative to the
// repository root.
type Worktree struct {
	Dir, Branch string
	// Landing says the task completed and has not landed yet.
	Landing bool
}

// Build reads what ralph status shows of the latest task. worktree
// returns where task t runs when it is a ralph run --worktree task, else
// nil. With no task yet, it is a failure.Failed error.
func Build(ctx context.Context, ws *workspace.Workspace, st *store.Store, worktree func(ctx context.Context, t store.Task) *Worktree) (Report, error) {
	t, err := st.LatestTask(ctx)
	if errors.Is(err, store.ErrNoTask) {
		return Report{}, failure.New(failure.Failed, err)
	}
	if err != nil {
		return Report{}, err
	}
	// A ralph run --worktree task keeps its state files in its worktree.
	tws := ws
	var wt *Worktree
	if rec := worktree(ctx, t); rec != nil {
		wt = rec
		if ok, _ := workspace.Exists(filepath.Join(ws.Root, rec.Dir, workspace.Dir)); ok {
			tws = &workspace.Workspace{Root: filepath.Join(ws.Root, rec.Dir)}
		}
	}
	rep := Report{Task: t, Phase: tws.Phase(), StatusFile: tws.Status(), Iteration: tws.Int(workspace.Iteration)}
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
	rep.Plan = CheckPlan(ctx, tws)
	if rep.Tampers, err = st.CountEvents(ctx, t.ID, store.KindTamper); err != nil {
		return rep, err
	}
	if rep.SandboxDenials, err = st.CountEvents(ctx, t.ID, store.KindSandbox); err != nil {
		return rep, err
	}
	if rep.Steps, err = st.Steps(ctx, t.ID); err != nil {
		return rep, err
	}
	if rep.Pending, err = st.PendingHumanRequests(ctx); err != nil {
		return rep, err
	}
	its, err := st.IterationTotals(ctx, t.ID)
	if err != nil {
		return rep, err
	}
	rep.ToolCalls = its.ToolCalls
	if wt != nil && tws == ws && its.Count > 0 {
		// The worktree is gone (a landing that failed): the store knows.
		rep.Iteration = its.Last
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

// Print shows r as ralph status does.
func Print(w io.Writer, r Report) {
	t := r.Task
	state := "ended"
	switch {
	case r.Running:
		state = fmt.Sprintf("running (pid %d)", r.PID)
	case t.Status == store.TaskInterrupted || t.Status == store.TaskRunning:
		state = "interrupted — continue with `ralph resume`"
	}
	fmt.Fprintf(w, "task %d: %s\n", t.Number, progress.OneLine(t.Message, 100))
	fmt.Fprintf(w, "  state:      %s\n", state)
	switch {
	case t.Status == store.TaskDone:
		fmt.Fprintf(w, "  ended:      %s — %s\n", t.Reason, t.Detail)
	case t.Reason != "" && t.Reason != "interrupted":
		// Stopped for a reason of its own that resume continues from
		// (state-lost): say which.
		fmt.Fprintf(w, "  stopped:    %s — %s\n", t.Reason, t.Detail)
	}
	if r.Worktree != "" {
		fmt.Fprintf(w, "  worktree:   %s on branch %s\n", r.Worktree, r.Branch)
		if r.NotLanded {
			fmt.Fprintf(w, "  landing:    not landed yet — ralph resume lands it\n")
		}
	}
	fmt.Fprintf(w, "  type:       %s\n", t.Type)
	fmt.Fprintf(w, "  agent:      %s\n", t.Agent)
	fmt.Fprintf(w, "  phase:      %s (status.txt: %s)\n", r.Phase, r.StatusFile)
	fmt.Fprintf(w, "  iteration:  %d (%d tool calls)\n", r.Iteration, r.ToolCalls)
	end := t.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	fmt.Fprintf(w, "  elapsed:    %s\n", end.Sub(t.StartedAt).Round(time.Second))
	fmt.Fprintf(w, "  cost:       $%.4f (%d input / %d output tokens)\n", t.CostUSD, t.InputTokens, t.OutputTokens)
	if p := r.Plan; p != nil {
		switch {
		case !p.Valid:
			fmt.Fprintf(w, "  plan:       %s, %s (ralph plan validate)\n", plural(len(p.Failures), "failure"), plural(len(p.Warnings), "warning"))
			for _, f := range p.Failures {
				fmt.Fprintf(w, "              %s\n", f.Format("FAIL", workspace.Plan))
			}
		case len(p.Warnings) > 0:
			fmt.Fprintf(w, "  plan:       valid, %s\n", plural(len(p.Warnings), "warning"))
		default:
			fmt.Fprintf(w, "  plan:       valid\n")
		}
	}
	for i, gr := range r.Gates {
		label := "            "
		if i == 0 {
			label = "  gates:    "
		}
		reason := ""
		if gr.Status == string(gate.Skip) {
			reason = " — " + progress.OneLine(gr.Message, 100)
		}
		fmt.Fprintf(w, "%s %s %s%s\n", label, gr.Status, gr.Gate, reason)
	}
	if r.Tampers > 0 {
		fmt.Fprintf(w, "  tampered:   %d (the agent changed what is not its own; the harness undid or held it — ralph log)\n", r.Tampers)
	}
	if r.SandboxDenials > 0 {
		fmt.Fprintf(w, "  sandbox:    %d (accesses outside the workspace the sandbox refused the agent — ralph log)\n", r.SandboxDenials)
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
		fmt.Fprintf(w, "%s %-8s %-6s %s\n", label, sr.Status, sr.Kind, name)
	}
	for _, p := range r.Pending {
		fmt.Fprintf(w, "  waiting:    request %d: %s — ralph approve %d / ralph reject %d\n", p.ID, progress.OneLine(p.Prompt, 80), p.ID, p.ID)
	}
	if r.Totals.Tasks > 1 {
		fmt.Fprintf(w, "  all tasks:  %d tasks, $%.4f (%d input / %d output tokens)\n", r.Totals.Tasks, r.Totals.CostUSD, r.Totals.InputTokens, r.Totals.OutputTokens)
	}
}

func nonNil(fs []plan.Finding) []plan.Finding {
	if fs == nil {
		return []plan.Finding{}
	}
	return fs
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

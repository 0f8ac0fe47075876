package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/mutation"
	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// planCheck is the PLAN-phase check at the top of an iteration: when the
// phase is plan and plan.tsx has content, validate it; write failures to
// feedback.md and stay, or resolve the plan context, write the build
// instructions and flip to BUILD. Without plan content it does nothing, so
// tasks that never write a plan pass straight through.
func (e *Engine) planCheck(ctx context.Context, r *run) {
	if e.ws.Phase() != workspace.PhasePlan {
		return
	}
	content := e.ws.PlanContent()
	if content == "" {
		return
	}
	if e.planCarriedOver(ctx, r, content) {
		return
	}
	root, res := plan.Check(workspace.Plan, []byte(content), e.opt.Registries)
	if root != nil && r.route == task.Mutation {
		e.mutationCheck(ctx, r, root, &res)
	}
	if !res.OK() {
		var b strings.Builder
		b.WriteString("# Plan Validation\n\nThe harness checked .ralph/plan.tsx and it is not valid yet. You are still in the PLAN phase.\n\n")
		for _, f := range res.Failures {
			b.WriteString(findingLine("FAIL", f) + "\n")
		}
		if len(res.Warnings) > 0 {
			b.WriteString("\n")
			for _, f := range res.Warnings {
				b.WriteString(findingLine("WARN", f) + "\n")
			}
		}
		b.WriteString("\nFix the issues and write the plan again. The harness validates it at the start of the next iteration.\n")
		_ = e.ws.Write(workspace.Feedback, b.String())
		_ = e.ws.SetStatus(workspace.StatusRunning)
		ids := make([]string, 0, len(res.Failures))
		for _, f := range res.Failures {
			ids = append(ids, f.ID)
		}
		e.harnessEvent(r, "plan-invalid", fmt.Sprintf("plan.tsx is not valid (%d failures: %s); staying in PLAN", len(res.Failures), strings.Join(ids, ", ")), "")
		return
	}

	var b strings.Builder
	b.WriteString("# Plan Validated ✓\n\nYour plan is structurally valid. The harness has moved the task to the BUILD phase: implement the plan now.\n")
	if e.opt.PlanContext != nil {
		if body := strings.TrimSpace(e.opt.PlanContext(ctx, root)); body != "" {
			b.WriteString("\n" + body + "\n")
		}
	} else {
		b.WriteString(defaultBuildBody(root))
	}
	if len(res.Warnings) > 0 {
		b.WriteString("\n## Plan warnings\n\n")
		for _, f := range res.Warnings {
			b.WriteString(findingLine("WARN", f) + "\n")
		}
	}
	b.WriteString("\n## When you are done\n\nWrite .ralph/summary.md (first line: a one-line summary), then write `complete` to .ralph/status.txt. The harness runs the quality gates and tells you here if anything fails.\n")
	_ = e.ws.Write(workspace.Feedback, b.String())
	pausepoint.At(pausepoint.PlanValidation)
	_ = e.ws.SetPhase(workspace.PhaseBuild)
	_ = e.ws.SetStatus(workspace.StatusRunning)
	e.harnessEvent(r, "plan-validated", fmt.Sprintf("plan validated (%d warnings); phase is now BUILD", len(res.Warnings)), "")
}

// planCarriedOver reports whether the plan is the previous task's, which
// a fresh or mutation task must change before it can open BUILD.
func (e *Engine) planCarriedOver(ctx context.Context, r *run, content string) bool {
	if !e.planUnchanged(ctx, r, content) {
		return false
	}
	fb, _ := e.ws.Read(workspace.Feedback)
	if strings.TrimSpace(fb) == "" {
		_ = e.ws.Write(workspace.Feedback, e.planUpdateNeeded(r))
	}
	return true
}

// planUnchanged reports whether content is the plan a fresh or mutation
// task started with: the previous task's, which cannot open BUILD.
func (e *Engine) planUnchanged(ctx context.Context, r *run, content string) bool {
	if r.route != task.Mutation && r.route != task.Fresh {
		return false
	}
	start, ok, _ := e.st.State(ctx, planAtStartKey(r.taskID))
	return ok && start == hashString(content)
}

// planUpdateNeeded is the feedback for a task whose plan is still the
// previous task's: what the harness needs before it validates the plan.
func (e *Engine) planUpdateNeeded(r *run) string {
	what := "Write a new plan for this task in .ralph/plan.tsx."
	if r.route == task.Mutation {
		what = fmt.Sprintf("Update .ralph/plan.tsx for this task: mark every change with a comment such as {/* TASK-N [ADD]: … */}, [MODIFY], [FIX] or [REMOVE], and mark what stays with {/* … PRESERVED … */} (N is this task's number, %d).", r.number)
	}
	return "# Plan Update Needed\n\nThe plan in .ralph/plan.tsx is the previous task's. " + what + " The harness validates it once it has changed, and only then can the task finish: asking to finish before that changes nothing.\n"
}

func findingLine(kind string, f plan.Finding) string {
	return f.Format(kind, workspace.Plan)
}

// defaultBuildBody lists what to build when no plan context resolver is
// configured: each section with its suggested file, or each step.
func defaultBuildBody(root *plan.Node) string {
	var b strings.Builder
	if secs := plan.Sections(root); len(secs) > 0 {
		b.WriteString("\n## Sections to build, in order\n\n")
		for i, s := range secs {
			fmt.Fprintf(&b, "%d. `%s`", i+1, s.Str("gumdrop"))
			if v := s.Str("variant"); v != "" {
				fmt.Fprintf(&b, " (variant %s)", v)
			}
			fmt.Fprintf(&b, " → %s\n", plan.SectionFile(s))
		}
	}
	if steps := plan.Steps(root); len(steps) > 0 {
		b.WriteString("\n## Steps, in order\n\n")
		for i, s := range steps {
			if s.Node.Component != "Step" {
				continue
			}
			fmt.Fprintf(&b, "%d. %s: %s\n", i+1, s.Node.Str("name"), firstLine(s.Node.Text))
		}
	}
	return b.String()
}

// applyPlanPrompt puts the plan's top-level Persona and Constraints into
// the system prompt data.
func (e *Engine) applyPlanPrompt(d *PromptData) {
	content := e.ws.PlanContent()
	if content == "" {
		return
	}
	root, err := plan.Parse([]byte(content))
	if err != nil {
		return
	}
	d.Persona = plan.Persona(root)
	d.Constraints = plan.Constraints(root)
}

// mutationCheck adds the checks of a mutation plan: every requirement of
// task.md has a marker, and no section of the plan at task start is gone
// without a [REMOVE] marker.
func (e *Engine) mutationCheck(ctx context.Context, r *run, root *plan.Node, res *plan.Result) {
	src, _ := e.ws.Read(workspace.Task)
	t, err := task.Parse([]byte(src))
	if err != nil {
		return
	}
	var prev *plan.Node
	if e.opt.Snapshots != nil {
		prev, _ = mutation.PreviousPlan(ctx, e.opt.Snapshots, r.number)
	}
	m := mutation.Validate(root, prev, t, r.number)
	res.Failures = append(res.Failures, m.Failures...)
	res.Warnings = append(res.Warnings, m.Warnings...)
}

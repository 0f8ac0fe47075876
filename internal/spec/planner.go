package spec

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/snapshot"
)

// plan runs one planner attempt. It returns the attempt's problem ("" when
// a plan was written and accepted) or an error that ends the run.
//
// The planner is read-only apart from plans/ and SCRATCHPAD.md: the tree is
// snapshotted before it runs, and any file it changed elsewhere (or a
// commit it made) fails the attempt and is rolled back.
func (p *Pipeline) plan(ctx context.Context, r *specRun, pos Position) (string, error) {
	n, err := p.startPlanning(ctx, r, pos)
	if err != nil {
		return "", err
	}
	system, prompt, err := p.plannerPrompt(r.s, pos)
	if err != nil {
		return "", err
	}
	before, err := head(ctx, p.opt.Layout.Root)
	if err != nil {
		return "", err
	}
	snap, err := p.opt.Snapshots.Save(ctx, snapshot.Manual(p.opt.Now()), fmt.Sprintf("before planning %s (attempt %d)", r.s.Rel, n))
	if err != nil {
		return "", fmt.Errorf("snapshot before planning: %w", err)
	}
	logName := PlanLog(n)
	res, agentErr := p.call(ctx, r, p.opt.Planner, Planner, n, system, prompt, logName)
	if fatal(ctx, agentErr) {
		return "", agentErr
	}
	problem, err := p.outOfBounds(ctx, snap.Name, before)
	if err == nil && problem == "" {
		problem, err = p.judgePlan(r.s, res, agentErr)
	}
	if err != nil {
		return "", err
	}
	if problem != "" {
		note(r.logs, logName, "attempt failed: %s", problem)
		return problem, nil
	}
	return "", p.acceptPlan(ctx, r, pos, n, logName)
}

// startPlanning counts planner attempt n and records that the spec is
// being planned.
func (p *Pipeline) startPlanning(ctx context.Context, r *specRun, pos Position) (int, error) {
	prior := 0
	if pos.Info != nil {
		prior = pos.Info.Attempt
	}
	n := max(r.rec.PlanAttempt, prior) + 1
	r.rec.PlanAttempt = n
	if err := p.put(ctx, r, StatePlanning); err != nil {
		return 0, err
	}
	if pos.Reason != "" {
		p.progress("  %s: re-planning (attempt %d): %s", r.s.Rel, n, pos.Reason)
	} else {
		p.progress("  %s: planning (attempt %d)", r.s.Rel, n)
	}
	return n, nil
}

// plannerPrompt renders the planner's prompts, with the old plan and why
// it was rejected when re-planning.
func (p *Pipeline) plannerPrompt(s Spec, pos Position) (system, prompt string, err error) {
	d, err := p.promptData(s)
	if err != nil {
		return "", "", err
	}
	d.PrevPlan, d.Reason = strings.TrimSpace(pos.PrevPlan), pos.Reason
	d.Promise = p.opt.Phrases.Planner
	return render(Planner, d)
}

// plansPrefix is the root-relative folder the planner may write plans in.
func (p *Pipeline) plansPrefix() string {
	l := p.opt.Layout
	if rel := l.RootRel(l.Dir); rel != "." {
		return rel + "/" + PlansDir + "/"
	}
	return PlansDir + "/"
}

// outOfBounds checks what the planner changed since the snapshot called
// snap and whether it moved HEAD from before. Anything outside the plans
// folder and the scratchpad, or a commit, is undone and returned as the
// attempt's problem; "" when the planner stayed in bounds.
func (p *Pipeline) outOfBounds(ctx context.Context, snap, before string) (string, error) {
	root := p.opt.Layout.Root
	changes, err := p.opt.Snapshots.Diff(ctx, snap)
	if err != nil {
		return "", fmt.Errorf("check the planner's changes: %w", err)
	}
	plans := p.plansPrefix()
	var outside []string
	for _, c := range changes {
		if c.Path != Scratchpad && !strings.HasPrefix(c.Path, plans) {
			outside = append(outside, c.Path)
		}
	}
	after, err := head(ctx, root)
	if err != nil {
		return "", err
	}
	committed := after != before
	if len(outside) == 0 && !committed {
		return "", nil
	}
	if committed {
		if err := resetHead(ctx, root, before); err != nil {
			return "", fmt.Errorf("undo the planner's commit: %w", err)
		}
	}
	if _, err := p.opt.Snapshots.Rollback(ctx, snap); err != nil {
		return "", fmt.Errorf("revert the planner's changes: %w", err)
	}
	var why []string
	if len(outside) > 0 {
		why = append(why, "changed files outside "+plans+" and "+Scratchpad+": "+strings.Join(outside, ", "))
	}
	if committed {
		why = append(why, "made a commit")
	}
	return "planner " + strings.Join(why, " and ") + " (reverted)", nil
}

// judgePlan checks the planner's completion contract: no agent error, a
// plan written, the final message ending with the planner phrase. A
// rejected plan is removed: it did not exist before this attempt, and a
// partial one must not pass for a hand-written plan on the next run.
func (p *Pipeline) judgePlan(s Spec, res agent.Result, agentErr error) (string, error) {
	l := p.opt.Layout
	content, _, err := l.LoadPlanContent(s)
	if err != nil {
		return "", err
	}
	problem := ""
	switch {
	case agentErr != nil:
		problem = "planner: " + agentErr.Error()
	case strings.TrimSpace(content) == "":
		problem = fmt.Sprintf("planner wrote no plan to %s", l.RootRel(l.PlanPath(s)))
	case !Ends(res.Final, p.opt.Phrases.Planner):
		problem = fmt.Sprintf("planner's final message does not end with %s", p.opt.Phrases.Planner)
	}
	if problem == "" {
		return "", nil
	}
	if err := os.Remove(l.PlanPath(s)); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("remove the rejected plan: %w", err)
	}
	return problem, nil
}

// acceptPlan records the plan of attempt n as the spec's active plan.
func (p *Pipeline) acceptPlan(ctx context.Context, r *specRun, pos Position, n int, logName string) error {
	l := p.opt.Layout
	info := PlanInfo{Status: PlanActive, CreatedAtUTC: stamp(p.opt.Now()), Attempt: n}
	if pos.Info != nil {
		info.InvalidatedAtUTC, info.InvalidationReason = pos.Info.InvalidatedAtUTC, pos.Info.InvalidationReason
	}
	if err := l.SavePlanInfo(r.s, info); err != nil {
		return err
	}
	r.rec.Feedback, r.rec.LastResult = "", fmt.Sprintf("plan attempt %d written", n)
	note(r.logs, logName, "plan accepted: %s", l.RootRel(l.PlanPath(r.s)))
	return p.put(ctx, r, StatePlanned)
}

package spec

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ralph-harness/ralph/internal/snapshot"
)

// plan runs one planner attempt. It returns the attempt's problem ("" when
// a plan was written and accepted) or an error that ends the run.
//
// The planner is read-only apart from plans/ and SCRATCHPAD.md: the tree is
// snapshotted before it runs, and any file it changed elsewhere (or a
// commit it made) fails the attempt and is rolled back.
func (p *Pipeline) plan(ctx context.Context, r *specRun, pos Position) (string, error) {
	l, s := p.opt.Layout, r.s
	prior := 0
	if pos.Info != nil {
		prior = pos.Info.Attempt
	}
	n := max(r.rec.PlanAttempt, prior) + 1
	r.rec.PlanAttempt = n
	if err := p.put(ctx, r, StatePlanning); err != nil {
		return "", err
	}
	if pos.Reason != "" {
		p.progress("  %s: re-planning (attempt %d): %s", s.Rel, n, pos.Reason)
	} else {
		p.progress("  %s: planning (attempt %d)", s.Rel, n)
	}
	d, err := p.promptData(s)
	if err != nil {
		return "", err
	}
	d.PrevPlan, d.Reason = strings.TrimSpace(pos.PrevPlan), pos.Reason
	d.Promise = p.opt.Phrases.Planner
	system, prompt, err := render(Planner, d)
	if err != nil {
		return "", err
	}
	before, err := head(ctx, l.Root)
	if err != nil {
		return "", err
	}
	snap, err := p.opt.Snapshots.Save(ctx, snapshot.Manual(p.opt.Now()), fmt.Sprintf("before planning %s (attempt %d)", s.Rel, n))
	if err != nil {
		return "", fmt.Errorf("snapshot before planning: %w", err)
	}
	logName := PlanLog(n)
	res, agentErr := p.call(ctx, r, p.opt.Planner, Planner, n, system, prompt, logName)
	if fatal(ctx, agentErr) {
		return "", agentErr
	}
	// Out of bounds?
	changes, err := p.opt.Snapshots.Diff(ctx, snap.Name)
	if err != nil {
		return "", fmt.Errorf("check the planner's changes: %w", err)
	}
	var outside []string
	plansPrefix := PlansDir + "/"
	if rel := l.RootRel(l.Dir); rel != "." {
		plansPrefix = rel + "/" + plansPrefix
	}
	for _, c := range changes {
		if c.Path != Scratchpad && !strings.HasPrefix(c.Path, plansPrefix) {
			outside = append(outside, c.Path)
		}
	}
	after, err := head(ctx, l.Root)
	if err != nil {
		return "", err
	}
	if len(outside) > 0 || after != before {
		if after != before {
			if err := resetHead(ctx, l.Root, before); err != nil {
				return "", fmt.Errorf("undo the planner's commit: %w", err)
			}
		}
		if _, err := p.opt.Snapshots.Rollback(ctx, snap.Name); err != nil {
			return "", fmt.Errorf("revert the planner's changes: %w", err)
		}
		var why []string
		if len(outside) > 0 {
			why = append(why, "changed files outside "+plansPrefix+" and "+Scratchpad+": "+strings.Join(outside, ", "))
		}
		if after != before {
			why = append(why, "made a commit")
		}
		problem := "planner " + strings.Join(why, " and ") + " (reverted)"
		note(r.logs, logName, "attempt failed: %s", problem)
		return problem, nil
	}
	problem := ""
	content, _, err := l.LoadPlanContent(s)
	if err != nil {
		return "", err
	}
	switch {
	case agentErr != nil:
		problem = "planner: " + agentErr.Error()
	case strings.TrimSpace(content) == "":
		problem = fmt.Sprintf("planner wrote no plan to %s", l.RootRel(l.PlanPath(s)))
	case !Ends(res.Final, p.opt.Phrases.Planner):
		problem = fmt.Sprintf("planner's final message does not end with %s", p.opt.Phrases.Planner)
	}
	if problem != "" {
		// The plan file did not exist before this attempt: a partial one
		// must not pass for a hand-written plan on the next run.
		if err := os.Remove(l.PlanPath(s)); err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("remove the rejected plan: %w", err)
		}
		note(r.logs, logName, "attempt failed: %s", problem)
		return problem, nil
	}
	info := PlanInfo{Status: PlanActive, CreatedAtUTC: stamp(p.opt.Now()), Attempt: n}
	if pos.Info != nil {
		info.InvalidatedAtUTC, info.InvalidationReason = pos.Info.InvalidatedAtUTC, pos.Info.InvalidationReason
	}
	if err := l.SavePlanInfo(s, info); err != nil {
		return "", err
	}
	r.rec.Feedback, r.rec.LastResult = "", fmt.Sprintf("plan attempt %d written", n)
	note(r.logs, logName, "plan accepted: %s", l.RootRel(l.PlanPath(s)))
	return "", p.put(ctx, r, StatePlanned)
}

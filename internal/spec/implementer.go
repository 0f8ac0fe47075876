package spec

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/gate"
)

// implement runs one implementation attempt: the implementer must move
// HEAD and end with its phrase, then the gates must pass; only then is a
// candidate recorded. It returns the attempt's problem ("" for a
// candidate) or an error that ends the run.
func (p *Pipeline) implement(ctx context.Context, r *specRun, pos Position) (string, error) {
	l, s := p.opt.Layout, r.s
	skip, rejected, err := p.askHumans(ctx, r, pos)
	if err != nil {
		return "", err
	}
	if rejected != "" {
		r.rejected = rejected
		return "", nil
	}
	n := r.rec.ImplAttempts + 1
	r.rec.ImplAttempts = n
	before, err := head(ctx, l.Root)
	if err != nil {
		return "", err
	}
	if r.rec.BaseCommit == "" {
		r.rec.BaseCommit = before
	}
	// An attempt a kill ended may have done part of the work, or all of
	// it: this attempt is shown its commits and the changes it left
	// uncommitted, continues from them, and the commits count as its own.
	var earlier, pending string
	if r.interrupted {
		r.interrupted = false
		if earlier, err = commitsSince(ctx, l.Root, r.rec.BaseCommit); err != nil {
			return "", err
		}
		if pending, err = pendingChanges(ctx, l.Root, l.RootRel(l.Dir)); err != nil {
			return "", err
		}
		if earlier != "" {
			before = r.rec.BaseCommit
		}
	}
	r.rec.LastResult = fmt.Sprintf("implementation attempt %d%s", n, underWay)
	if err := p.put(ctx, r, StateImplementing); err != nil {
		return "", err
	}
	p.progress("  %s: implementing (attempt %d)", s.Rel, n)
	d, err := p.promptData(s)
	if err != nil {
		return "", err
	}
	d.Plan, d.Promise = withSkips(pos.Plan, skip), p.opt.Phrases.Implementer
	if r.rec.Feedback != "" {
		d.Previous, d.Feedback = n-1, strings.TrimSpace(r.rec.Feedback)
	}
	if earlier != "" || pending != "" {
		d.Interrupted, d.Earlier, d.Pending = n-1, earlier, pending
	}
	system, prompt, err := render(Implementer, d)
	if err != nil {
		return "", err
	}
	logName := ImplLog(n)
	res, agentErr := p.call(ctx, r, p.opt.Implementer, Implementer, n, system, prompt, logName)
	if fatal(ctx, agentErr) {
		return "", agentErr
	}
	after, err := head(ctx, l.Root)
	if err != nil {
		return "", err
	}
	var problems []string
	switch {
	case agentErr != nil:
		problems = append(problems, "implementer: "+agentErr.Error())
	case !Ends(res.Final, p.opt.Phrases.Implementer):
		problems = append(problems, fmt.Sprintf("implementer's final message does not end with %s", p.opt.Phrases.Implementer))
	}
	if after == before {
		problem := "implementer made no commit (HEAD did not move)"
		if lock := indexLock(ctx, l.Root); lock != "" {
			problem += " while " + lock + " exists (git commits nothing while it does; a git killed earlier may have left it)"
		}
		problems = append(problems, problem)
	}
	if len(problems) > 0 {
		problem := strings.Join(problems, "; ")
		r.rec.Feedback = "The harness did not accept your attempt: " + problem + ". Commit your work with git and end your final message with " + p.opt.Phrases.Implementer + "."
		note(r.logs, logName, "attempt failed: %s", problem)
		return problem, nil
	}
	results := gate.RunAll(ctx, p.opt.Gates, gate.Env{Root: l.Root})
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if failed := gate.Failed(results); len(failed) > 0 {
		names := make([]string, len(failed))
		for i, f := range failed {
			names[i] = f.Gate + " (" + strings.TrimSuffix(firstLine(f.Message), ":") + ")"
		}
		problem := "gates failed: " + strings.Join(names, ", ")
		r.rec.Feedback = gate.Feedback(results)
		note(r.logs, logName, "attempt failed: %s\n\n%s", problem, r.rec.Feedback)
		return problem, nil
	}
	planAttempt := 1
	if pos.Info != nil {
		planAttempt = pos.Info.Attempt
	}
	c := Candidate{Commit: after, BaseCommit: r.rec.BaseCommit, PlanAttempt: planAttempt, ImplAttempt: n, CreatedAtUTC: stamp(p.opt.Now())}
	if err := l.SaveCandidate(s, c); err != nil {
		return "", err
	}
	r.rec.Feedback, r.rec.LastResult = "", fmt.Sprintf("implementation attempt %d committed %s", n, short(after))
	note(r.logs, logName, "candidate recorded: %s", short(after))
	return "", p.put(ctx, r, StateCandidate)
}

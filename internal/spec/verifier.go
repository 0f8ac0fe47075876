package spec

import (
	"context"
	"fmt"
	"strings"
)

// verify runs the verifier on the candidate. Pass marks the spec done;
// PLAN_INVALIDATION archives the plan so the next step re-plans; any other
// failure drops the candidate and keeps the report as the implementer's
// feedback; no verdict keeps the candidate for another verification. It
// returns the attempt's problem ("" for a pass) or an error that ends the
// run.
func (p *Pipeline) verify(ctx context.Context, r *specRun, pos Position) (string, error) {
	l, s, c := p.opt.Layout, r.s, pos.Candidate
	n := r.rec.VerifyAttempts + 1
	r.rec.VerifyAttempts = n
	if err := p.put(ctx, r, StateVerifying); err != nil {
		return "", err
	}
	p.progress("  %s: verifying %s (attempt %d)", s.Rel, short(c.Commit), n)
	d, err := p.promptData(s)
	if err != nil {
		return "", err
	}
	d.Plan, d.Base, d.Commit = strings.TrimSpace(pos.Plan), short(c.BaseCommit), short(c.Commit)
	if d.Base == "" {
		d.Base = "(empty repository)"
	}
	if d.Diff, err = diff(ctx, l.Root, c.BaseCommit, c.Commit); err != nil {
		return "", fmt.Errorf("diff the candidate: %w", err)
	}
	system, prompt, err := render(Verifier, d)
	if err != nil {
		return "", err
	}
	res, agentErr := p.call(ctx, r, p.opt.Verifier, Verifier, n, system, prompt, VerifyLog)
	if fatal(ctx, agentErr) {
		return "", agentErr
	}
	if agentErr != nil {
		problem := "verifier: " + agentErr.Error()
		note(r.logs, VerifyLog, "no verdict: %s", problem)
		return problem, nil
	}
	verdict, reason := Judge(res.Final, p.opt.Phrases)
	switch verdict {
	case VerdictPass:
		err := l.MarkDone(s, DoneRecord{Commit: c.Commit, BaseCommit: c.BaseCommit, PlanAttempt: c.PlanAttempt,
			ImplAttempts: r.rec.ImplAttempts, Report: strings.TrimSuffix(strings.TrimSpace(res.Final), p.opt.Phrases.Pass), At: p.opt.Now()})
		if err != nil {
			return "", err
		}
		if err := l.RemoveCandidate(s); err != nil {
			return "", err
		}
		note(r.logs, VerifyLog, "verdict: pass")
		return "", nil
	case VerdictInvalidate:
		if _, err := l.InvalidatePlan(s, reason, p.opt.Now()); err != nil {
			return "", err
		}
		if err := l.RemoveCandidate(s); err != nil {
			return "", err
		}
		r.rec.Feedback = ""
		r.rec.State = StateInvalidated
		note(r.logs, VerifyLog, "verdict: plan invalidated: %s", reason)
		return "verifier invalidated the plan: " + reason, nil
	case VerdictFail:
		if err := l.RemoveCandidate(s); err != nil {
			return "", err
		}
		r.rec.Feedback = "The verifier rejected the implementation:\n\n" + strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(res.Final), p.opt.Phrases.Fail))
		note(r.logs, VerifyLog, "verdict: fail")
		return "verifier rejected the implementation: " + firstLine(strings.TrimSuffix(strings.TrimSpace(res.Final), p.opt.Phrases.Fail)), nil
	}
	problem := fmt.Sprintf("verifier's final message ends with neither %s nor %s", p.opt.Phrases.Pass, p.opt.Phrases.Fail)
	note(r.logs, VerifyLog, "no verdict: %s", problem)
	return problem, nil
}

// firstLine returns the first non-empty line of s, shortened.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 160 {
				l = l[:159] + "…"
			}
			return l
		}
	}
	return "(no report)"
}

package spec

// One step at a time: a Temporal workflow runs a spec's loop itself
// (failures, backoff, retries, <Human> waits) and each agent call is one
// activity that runs `ralph specs run --step-result FILE`, i.e. Step: the
// step the spec's files say comes next, nothing more. The record the
// workflow holds is seeded into the store before, and read back after.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/store"
)

// StepReport is what one step of a spec did.
type StepReport struct {
	// Step is the step that ran: plan, implement, verify, or done when
	// the spec was done already.
	Step Step `json:"step"`
	// Problem is the step's failed attempt ("" when it succeeded): the
	// caller counts it and retries.
	Problem string `json:"problem,omitempty"`
	// Rejected is why a person's answer ends the spec (onReject stop).
	Rejected string `json:"rejected,omitempty"`
	// NeedHuman is the <Human> of the plan that has no answer yet: the
	// step ended before its agent ran; run it again with the answer.
	NeedHuman *HumanNeed `json:"need_human,omitempty"`
	// Done: the spec is verified.
	Done bool `json:"done,omitempty"`
	// Record is the spec's record after the step.
	Record store.SpecRecord `json:"record"`
	// Logs is the step's log folder.
	Logs string `json:"logs,omitempty"`
}

// HumanNeed is a <Human> of the plan waiting for its answer.
type HumanNeed struct {
	// Key names the request: spec, plan attempt and position in the plan.
	Key     string        `json:"key"`
	Type    string        `json:"type"`
	Prompt  string        `json:"prompt"`
	Options []string      `json:"options,omitempty"`
	Timeout time.Duration `json:"timeout"`
}

// needHumanError ends a step at a <Human> with no answer.
type needHumanError struct{ need HumanNeed }

func (e *needHumanError) Error() string { return "waiting for a human: " + e.need.Prompt }

// newHumanNeed describes the <Human> n as its request under key.
func newHumanNeed(key string, n *plan.Node) HumanNeed {
	req := engine.NewHumanRequest(0, key, n)
	timeout, _ := engine.HumanTimeout(n)
	return HumanNeed{Key: key, Type: req.Type, Prompt: req.Prompt, Options: req.Options, Timeout: timeout}
}

// Step runs the one step s is at (plan, implement or verify) and reports
// what happened; it neither backs off nor counts failures. A <Human> of
// the plan must be answered in the store already (a resolved request
// under its key): one that is not ends the step with NeedHuman.
func (p *Pipeline) Step(ctx context.Context, s Spec) (StepReport, error) {
	r, skip, err := p.open(ctx, s)
	if err != nil {
		return StepReport{}, err
	}
	if skip {
		return StepReport{Step: StepDone, Done: true, Record: r.rec}, nil
	}
	r.oneStep = true
	l := p.opt.Layout
	pos, err := l.Position(s, p.opt.Now())
	if err != nil {
		return StepReport{}, err
	}
	rep := StepReport{Step: pos.Step, Logs: r.logs}
	var problem string
	switch pos.Step {
	case StepPlan:
		problem, err = p.plan(ctx, r, pos)
	case StepImplement:
		problem, err = p.implement(ctx, r, pos)
	case StepVerify:
		problem, err = p.verify(ctx, r, pos)
	}
	var need *needHumanError
	switch {
	case errors.As(err, &need):
		rep.NeedHuman = &need.need
		r.rec.State = StateWaiting
		rep.Record = r.rec
		return rep, nil
	case err != nil:
		return StepReport{}, err
	case r.rejected != "":
		r.rec.LastResult = "rejected: " + r.rejected
		rep.Rejected = "rejected by a person: " + r.rejected
		err = p.put(ctx, r, StateFailed)
	case problem != "":
		r.rec.LastResult = problem
		rep.Problem = problem
		p.progress("  %s: attempt failed: %s", s.Rel, problem)
		err = p.put(ctx, r, "")
	default:
		if pos, err = l.Position(s, p.opt.Now()); err == nil && pos.Step == StepDone {
			r.rec.BaseCommit, r.rec.Feedback, r.rec.LastResult = "", "", "verified"
			rep.Done = true
			err = p.put(ctx, r, StateDone)
		}
	}
	if err != nil {
		return StepReport{}, fmt.Errorf("spec %s: %w", s.Rel, err)
	}
	rep.Record = r.rec
	return rep, nil
}

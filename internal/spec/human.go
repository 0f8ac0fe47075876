package spec

// <Human> markers in a spec's orchestration plan. The implementer works
// the whole plan in one call, so before it runs, every <Human> of the plan
// asks its person, in document order, the same way a task's plan does
// (internal/engine): a request in the store that `ralph pending` lists and
// `ralph approve`/`ralph reject` answer from another process (or a
// Temporal workflow's signal, relayed by the worker). Approve continues;
// reject or timeout follows onReject: "stop" (the default) fails the spec
// as rejected, "skip" tells the implementer to leave out the next <Step>.
// Requests are keyed by spec, plan attempt and position, so a resumed run
// waits on the request it made before and a new plan asks again.

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/store"
)

// Humans is what the pipeline needs of the store to ask a person.
type Humans interface {
	engine.HumanStore
	RequestHuman(ctx context.Context, r store.HumanRequest) (store.HumanRequest, error)
	LatestHumanRequest(ctx context.Context, taskID int64, stepKey string) (store.HumanRequest, bool, error)
}

var _ Humans = (*store.Store)(nil)

// humanKey names the request of the plan entry at idx.
func humanKey(s Spec, planAttempt, idx int) string {
	return fmt.Sprintf("spec:%s:plan-%d:entry-%d", s.Rel, planAttempt, idx)
}

// askHumans asks every <Human> of the plan in order. It returns the names
// of the steps a person said to skip, or the reason the spec is rejected
// ("" when it may go on), or an error that ends the run.
func (p *Pipeline) askHumans(ctx context.Context, r *specRun, pos Position) (skip []string, rejected string, err error) {
	root, perr := plan.Parse([]byte(pos.Plan))
	if perr != nil || root == nil || root.Component != "Plan" || p.opt.Humans == nil {
		return nil, "", nil
	}
	planAttempt := 1
	if pos.Info != nil {
		planAttempt = pos.Info.Attempt
	}
	refs := plan.Steps(root)
	for i, ref := range refs {
		n := ref.Node
		if n.Component != "Human" {
			continue
		}
		req, err := p.askHuman(ctx, r, humanKey(r.s, planAttempt, i), n)
		if err != nil {
			return nil, "", err
		}
		if !req.Rejected() {
			p.progress("  %s: request %d approved%s", r.s.Rel, req.ID, response(req))
			continue
		}
		verdict := "rejected"
		if req.Status == store.HumanTimeout {
			verdict = "timed out"
		}
		if n.Str("onReject") == "skip" {
			what := "nothing left to skip"
			for _, next := range refs[i+1:] {
				if next.Node.Component == "Step" {
					what = "skipping step " + next.Node.Str("name")
					skip = append(skip, next.Node.Str("name"))
					break
				}
			}
			p.progress("  %s: request %d %s%s; onReject=skip: %s", r.s.Rel, req.ID, verdict, response(req), what)
			continue
		}
		return nil, fmt.Sprintf("request %d %s: %s%s", req.ID, verdict, firstLine(req.Prompt), response(req)), nil
	}
	return skip, "", nil
}

// askHuman makes (or finds again) the request under key and waits for
// its answer.
func (p *Pipeline) askHuman(ctx context.Context, r *specRun, key string, n *plan.Node) (store.HumanRequest, error) {
	h := p.opt.Humans
	req, ok, err := h.LatestHumanRequest(ctx, 0, key)
	if err != nil {
		return req, err
	}
	if !ok {
		want := engine.NewHumanRequest(0, key, n)
		timeout, terr := engine.HumanTimeout(n)
		if terr != nil {
			p.progress("  %s: <Human> at line %d: %v; waiting the default %s", r.s.Rel, n.Line, terr, engine.DefaultHumanTimeout)
		}
		want.TimeoutAt = p.opt.Now().Add(timeout)
		if req, err = h.RequestHuman(ctx, want); err != nil {
			return req, err
		}
	}
	if req.Status != store.HumanPending {
		return req, nil
	}
	if r.oneStep {
		return req, &needHumanError{need: newHumanNeed(key, n)}
	}
	if err := p.put(ctx, r, StateWaiting); err != nil {
		return req, err
	}
	p.progress("  %s: waiting for a human, request %d: %s — answer with %s", r.s.Rel, req.ID, firstLine(req.Prompt), engine.AnswerHint(req))
	return engine.AwaitHuman(ctx, h, req, p.opt.Now, nil)
}

func response(req store.HumanRequest) string {
	if req.Response == "" {
		return ""
	}
	return ": " + req.Response
}

// withSkips tells the implementer which steps a person said to leave out.
func withSkips(planText string, skip []string) string {
	if len(skip) == 0 {
		return planText
	}
	quoted := make([]string, len(skip))
	for i, s := range skip {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return strings.TrimSpace(planText) + "\n\nA person declined the following step(s); skip them, do not implement them: " + strings.Join(quoted, ", ")
}

package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/agent/script"
	"github.com/ralph-harness/ralph/internal/store"
)

// Step runs one step at a time and reports it without counting failures
// or backing off; a failed verification leaves feedback in the record for
// the next implement step; agent events are counted per call.
func TestStepRunsOneStepAtATime(t *testing.T) {
	root := newRepo(t, map[string]string{"0001-foo.md": "Write foo.txt containing foo and bar.\n"})
	h := newHarness(t, root)
	h.opt.Planner = agentScript(t, script.Iteration{Actions: []script.Action{write("specs/plans/0001-foo.md", "# Plan\n1. foo.txt\n")}, Final: complete})
	h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete), commit("foo.txt", "foo\nbar\n", complete))
	h.opt.Verifier = agentScript(t,
		script.Iteration{Final: "foo.txt lacks bar.\n<promise>FAIL</promise>"},
		script.Iteration{Final: pass})
	p := New(h.opt)
	ctx := context.Background()
	type want struct {
		step    Step
		problem string
		done    bool
		state   string
	}
	for i, w := range []want{
		{StepPlan, "", false, StatePlanned},
		{StepImplement, "", false, StateCandidate},
		{StepVerify, "verifier rejected the implementation: foo.txt lacks bar.", false, StateVerifying},
		{StepImplement, "", false, StateCandidate},
		{StepVerify, "", true, StateDone},
	} {
		rep, err := p.Step(ctx, h.specs[0])
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if rep.Step != w.step || rep.Problem != w.problem || rep.Done != w.done || rep.Record.State != w.state || rep.NeedHuman != nil {
			t.Fatalf("step %d = %+v, want %+v", i+1, rep, w)
		}
		if i == 2 && !strings.Contains(rep.Record.Feedback, "foo.txt lacks bar.") {
			t.Errorf("the failed verification left no feedback: %+v", rep.Record)
		}
	}
	if got := readFile(t, root, "foo.txt"); got != "foo\nbar\n" {
		t.Errorf("foo.txt = %q", got)
	}
	calls, err := h.st.SpecCalls(ctx, 0)
	if err != nil || len(calls) != 5 {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	if _, _, events, ok, err := h.st.SpecCallProgress(ctx); err != nil || !ok || events == 0 {
		t.Errorf("no agent events counted: %d, %v", events, err)
	}
}

// At a <Human> with no answer, Step ends before the implementer runs and
// names the request; with the answer in the store under that key, the
// step runs (approved) or the spec is rejected.
func TestStepEndsAtAnUnansweredHuman(t *testing.T) {
	for _, answer := range []string{store.HumanApproved, store.HumanRejected} {
		t.Run(answer, func(t *testing.T) {
			root := newRepo(t, map[string]string{
				"0001-foo.md":       "Write foo.txt.\n",
				"plans/0001-foo.md": "<Plan name=\"foo\">\n  <Human message=\"Write foo?\" timeout=\"90s\" />\n  <Step name=\"write\">Write foo.txt</Step>\n</Plan>\n",
			})
			h := newHarness(t, root)
			h.opt.Humans = h.st
			h.opt.Implementer = agentScript(t, commit("foo.txt", "foo\n", complete))
			p := New(h.opt)
			ctx := context.Background()
			rep, err := p.Step(ctx, h.specs[0])
			if err != nil {
				t.Fatal(err)
			}
			need := rep.NeedHuman
			if need == nil || need.Prompt != "Write foo?" || need.Timeout.Seconds() != 90 || need.Key != "spec:0001-foo.md:plan-1:entry-0" || rep.Record.ImplAttempts != 0 || rep.Record.State != StateWaiting {
				t.Fatalf("report = %+v, need %+v", rep, need)
			}
			if exists(root, "foo.txt") {
				t.Fatal("the implementer ran before the answer")
			}
			req, ok, err := h.st.LatestHumanRequest(ctx, 0, need.Key)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			if _, err := h.st.ResolveHuman(ctx, req.ID, answer, ""); err != nil {
				t.Fatal(err)
			}
			rep, err = p.Step(ctx, h.specs[0])
			if err != nil {
				t.Fatal(err)
			}
			if answer == store.HumanApproved {
				if rep.Step != StepImplement || rep.NeedHuman != nil || rep.Record.State != StateCandidate || !exists(root, "foo.txt") {
					t.Errorf("after the approval: %+v", rep)
				}
				return
			}
			if !strings.Contains(rep.Rejected, "rejected: Write foo?") || rep.Record.State != StateFailed || exists(root, "foo.txt") {
				t.Errorf("after the rejection: %+v", rep)
			}
		})
	}
}

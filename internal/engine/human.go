package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// DefaultHumanTimeout is how long a <Human> waits when it sets no timeout.
const DefaultHumanTimeout = 30 * time.Minute

// humanPoll is how often a waiting run looks for an answer in the store;
// an approval from another process is seen well within a second.
const humanPoll = 250 * time.Millisecond

// humanKey names the request a plan entry makes, so that a resumed run
// waits on the request it made before instead of asking again.
func humanKey(idx int) string { return "plan-entry:" + strconv.Itoa(idx) }

// HumanTimeout reads a <Human>'s timeout prop: a number is seconds
// ({120}), a string is a Go duration ("30m", "2s") or a number of
// seconds ("120"). No prop means DefaultHumanTimeout; a value that is not
// a positive duration is an error (and the caller uses the default).
func HumanTimeout(n *plan.Node) (time.Duration, error) {
	v, ok := n.Prop("timeout")
	if !ok {
		return DefaultHumanTimeout, nil
	}
	var d time.Duration
	switch v.Kind {
	case plan.Number:
		d = time.Duration(v.Num * float64(time.Second))
	case plan.String:
		s := strings.TrimSpace(v.Str)
		if secs, err := strconv.ParseFloat(s, 64); err == nil {
			d = time.Duration(secs * float64(time.Second))
		} else if d, err = time.ParseDuration(s); err != nil {
			return DefaultHumanTimeout, fmt.Errorf("timeout %q is not a duration (want e.g. \"30m\", \"2s\" or {120} seconds)", v.Str)
		}
	default:
		return DefaultHumanTimeout, fmt.Errorf("timeout %s is not a duration (want e.g. \"30m\", \"2s\" or {120} seconds)", v)
	}
	if d <= 0 {
		return DefaultHumanTimeout, fmt.Errorf("timeout %s is not positive", v)
	}
	return d, nil
}

// humanRequestFor builds the request a <Human> makes.
func humanRequestFor(taskID int64, idx int, n *plan.Node) store.HumanRequest {
	return NewHumanRequest(taskID, humanKey(idx), n)
}

// NewHumanRequest builds the request a <Human> node makes for a task (0
// for none, as a spec's) under stepKey: its type, message and details,
// and options. The caller sets the timeout (see HumanTimeout).
func NewHumanRequest(taskID int64, stepKey string, n *plan.Node) store.HumanRequest {
	req := store.HumanRequest{TaskID: taskID, StepKey: stepKey, Type: n.Str("type"), Prompt: strings.TrimSpace(n.Str("message"))}
	if req.Type == "" {
		req.Type = store.HumanConfirmation
	}
	if req.Prompt == "" {
		req.Prompt = "Approval required"
	}
	if details := strings.TrimSpace(n.Text); details != "" {
		req.Prompt += "\n\n" + details
	}
	if v, ok := n.Prop("options"); ok && v.Kind == plan.Array {
		for _, o := range v.List {
			if o.Kind == plan.String {
				req.Options = append(req.Options, o.Str)
			} else {
				req.Options = append(req.Options, o.String())
			}
		}
	}
	return req
}

// askHuman makes (or finds again, after a crash or a resume) the request
// of the <Human> at entry idx and blocks until it is answered, times out,
// the run is stopped or ctx ends. A non-empty reason ends the run.
func (e *Engine) askHuman(ctx context.Context, r *run, idx int, n *plan.Node, row store.StepRecord) (store.HumanRequest, Reason, string) {
	key := humanKey(idx)
	req, ok, err := e.st.LatestHumanRequest(ctx, r.taskID, key)
	if err != nil {
		return req, AgentError, err.Error()
	}
	// A forced resume of a run a person said no to asks again.
	reask := ok && req.Rejected() && row.Status == store.StepRejected && r.force
	if !ok || reask || req.Status == store.HumanPending {
		// status.txt says waiting before anyone can see the request.
		_ = e.ws.SetStatus(workspace.StatusWaiting)
	}
	if !ok || reask {
		want := humanRequestFor(r.taskID, idx, n)
		timeout, terr := HumanTimeout(n)
		if terr != nil {
			e.harnessEvent(r, "human-warning", fmt.Sprintf("<Human> at plan.tsx:%d: %v; waiting the default %s", n.Line, terr, DefaultHumanTimeout), "")
		}
		want.TimeoutAt = e.now().Add(timeout)
		if req, err = e.st.RequestHuman(ctx, want); err != nil {
			_ = e.ws.SetStatus(workspace.StatusRunning)
			return req, AgentError, err.Error()
		}
		e.notify(ctx, fmt.Sprintf("ralph: task %d waits for a human (request %d): %s — answer with `ralph approve %d` or `ralph reject %d`", r.number, req.ID, firstLine(req.Prompt), req.ID, req.ID))
	}
	if req.Status != store.HumanPending {
		_ = e.ws.SetStatus(workspace.StatusRunning)
		return req, "", ""
	}
	return e.waitHuman(ctx, r, req)
}

// waitHuman polls the store until req is resolved. status.txt says
// waiting meanwhile.
func (e *Engine) waitHuman(ctx context.Context, r *run, req store.HumanRequest) (store.HumanRequest, Reason, string) {
	_ = e.ws.SetStatus(workspace.StatusWaiting)
	defer func() {
		if e.ws.Status() == workspace.StatusWaiting {
			_ = e.ws.SetStatus(workspace.StatusRunning)
		}
	}()
	how := AnswerHint(req)
	left := ""
	if !req.TimeoutAt.IsZero() {
		left = fmt.Sprintf(" (times out in %s)", max(req.TimeoutAt.Sub(e.now()), 0).Round(time.Second))
	}
	e.harnessEvent(r, "human", fmt.Sprintf("waiting for a human, request %d: %s — answer with %s%s", req.ID, firstLine(req.Prompt), how, left), "")

	cur, err := AwaitHuman(ctx, e.st, req, e.now, func(cur store.HumanRequest) {
		msg := fmt.Sprintf("waiting for request %d: %s", cur.ID, how)
		if !cur.TimeoutAt.IsZero() {
			msg += fmt.Sprintf("; times out in %s", cur.TimeoutAt.Sub(e.now()).Round(time.Second))
		}
		e.report(r, Progress{Stage: StageWait, Message: msg})
	})
	var stop *HumanStopError
	switch {
	case err == nil:
		return cur, "", ""
	case ctx.Err() != nil:
		return req, Interrupted, fmt.Sprintf("interrupted while waiting for request %d; it stays pending, run `ralph resume` to wait again", req.ID)
	case errors.As(err, &stop):
		return cur, Stopped, fmt.Sprintf("stopped on request while waiting for request %d (it stays pending): %s", req.ID, stop.Reason)
	default:
		return cur, AgentError, err.Error()
	}
}

// AnswerHint says how to answer req: the approve and reject commands,
// with the response it needs.
func AnswerHint(req store.HumanRequest) string {
	switch {
	case req.Type == store.HumanText:
		return fmt.Sprintf("`ralph approve %d --response TEXT` or `ralph reject %d`", req.ID, req.ID)
	case req.Type == store.HumanSelect && len(req.Options) > 0:
		return fmt.Sprintf("`ralph approve %d --response OPTION` (one of %s) or `ralph reject %d`", req.ID, strings.Join(req.Options, ", "), req.ID)
	}
	return fmt.Sprintf("`ralph approve %d` or `ralph reject %d`", req.ID, req.ID)
}

// HumanStore is what waiting on a request needs of the store.
type HumanStore interface {
	HumanRequestByID(ctx context.Context, id int64) (store.HumanRequest, error)
	ResolveHuman(ctx context.Context, id int64, status, response string) (store.HumanRequest, error)
	State(ctx context.Context, key string) (string, bool, error)
}

var _ HumanStore = (*store.Store)(nil)

// HumanStopError means a stop was requested (`ralph stop`) while a run
// waited on a request; the request stays pending.
type HumanStopError struct {
	Reason string
}

func (e *HumanStopError) Error() string { return "stopped on request: " + e.Reason }

// AwaitHuman polls st until req is answered (another process resolves it:
// `ralph approve/reject`, or a Temporal worker relaying a signal) and
// returns it answered. Past its timeout it records the timeout and returns
// that. It returns ctx's error when ctx ends and a *HumanStopError when a
// stop is requested; the request then stays pending. each, when set, is
// called about once a second while the request waits.
func AwaitHuman(ctx context.Context, st HumanStore, req store.HumanRequest, now func() time.Time, each func(cur store.HumanRequest)) (store.HumanRequest, error) {
	if now == nil {
		now = time.Now
	}
	tick := time.NewTicker(humanPoll)
	defer tick.Stop()
	var shown time.Time
	for {
		cur, err := st.HumanRequestByID(ctx, req.ID)
		switch {
		case ctx.Err() != nil:
			return req, ctx.Err()
		case err != nil:
			return req, err
		case cur.Status != store.HumanPending:
			return cur, nil
		}
		if reason, ok, _ := st.State(ctx, store.KeyStopRequest); ok {
			return cur, &HumanStopError{Reason: reason}
		}
		t := now()
		if !cur.TimeoutAt.IsZero() && !t.Before(cur.TimeoutAt) {
			done, err := st.ResolveHuman(ctx, cur.ID, store.HumanTimeout, "")
			var np *store.NotPendingError
			if errors.As(err, &np) {
				continue // answered at the last moment: read the answer
			}
			if err != nil {
				return cur, err
			}
			return done, nil
		}
		if each != nil && t.Sub(shown) >= time.Second {
			shown = t
			each(cur)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// Package approval lists the requests a plan's <Human> made and answers
// them (approve, reject), and takes a person's stop requests to a running
// loop (ralph stop, and stop --clear to withdraw one), in the store a run
// reads them from.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
)

// Globals is what every command works with (streams, directory, logger).
type Globals = session.Globals

// Pending lists the open requests, as JSON with asJSON.
func Pending(ctx context.Context, g *Globals, asJSON bool) error {
	_, st, err := session.OpenRunStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	reqs, err := st.PendingHumanRequests(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if reqs == nil {
			reqs = []store.HumanRequest{}
		}
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reqs)
	}
	if len(reqs) == 0 {
		fmt.Fprintln(g.Stdout, "no pending requests")
		return nil
	}
	now := time.Now()
	for _, r := range reqs {
		head, rest, _ := strings.Cut(strings.TrimSpace(r.Prompt), "\n")
		fmt.Fprintf(g.Stdout, "%d\t%s\t%s\n", r.ID, r.Type, progress.OneLine(head, 100))
		// The details (a <Human>'s text, the diff of a protected file)
		// follow in full: they are what the person decides on.
		if rest = strings.Trim(rest, "\n"); rest != "" {
			for _, l := range strings.Split(rest, "\n") {
				fmt.Fprintf(g.Stdout, "\t%s\n", l)
			}
		}
		if len(r.Options) > 0 {
			fmt.Fprintf(g.Stdout, "\toptions: %s\n", strings.Join(r.Options, ", "))
		}
		when := "asked " + now.Sub(r.CreatedAt).Round(time.Second).String() + " ago"
		if !r.TimeoutAt.IsZero() {
			if left := r.TimeoutAt.Sub(now); left > 0 {
				when += ", times out in " + left.Round(time.Second).String()
			} else {
				when += ", timed out (resolved when the run next looks)"
			}
		}
		fmt.Fprintf(g.Stdout, "\t%s — answer with `ralph approve %d` or `ralph reject %d`\n", when, r.ID, r.ID)
	}
	return nil
}

// Answer resolves request arg with status. It only opens the store, so
// it works while a run holds the workspace lock.
func Answer(ctx context.Context, g *Globals, arg, status, response string) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id <= 0 {
		return failure.New(failure.Usage, fmt.Errorf("request id %q is not a number (see `ralph pending`)", arg))
	}
	ws, st, err := session.OpenRunStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	req, err := st.HumanRequestByID(ctx, id)
	if errors.Is(err, store.ErrNoHumanRequest) {
		return failure.New(failure.Failed, fmt.Errorf("no pending request %d in this workspace (see `ralph pending`)", id))
	}
	if err != nil {
		return err
	}
	var ae *store.AnswerError
	if errors.As(req.CheckAnswer(status, response), &ae) {
		if ae.Request.Type == store.HumanSelect {
			return failure.New(failure.Usage, fmt.Errorf("request %d asks to choose one of %s: approve it with --response OPTION", id, strings.Join(req.Options, ", ")))
		}
		return failure.New(failure.Usage, fmt.Errorf("request %d asks for text: approve it with --response TEXT", id))
	}
	done, err := st.ResolveHumanAs(ctx, id, status, response, store.Answerer{Via: "cli"})
	var np *store.NotPendingError
	switch {
	case errors.Is(err, store.ErrNoHumanRequest):
		return failure.New(failure.Failed, fmt.Errorf("no pending request %d in this workspace (see `ralph pending`)", id))
	case errors.As(err, &np):
		return failure.New(failure.Failed, np)
	case err != nil:
		return err
	}
	fmt.Fprintf(g.Stdout, "%s request %d: %s\n", done.Status, done.ID, progress.OneLine(done.Prompt, 100))
	if pid := ws.HolderPID(); pid != 0 {
		fmt.Fprintf(g.Stdout, "the run (pid %d) continues\n", pid)
	} else {
		fmt.Fprintln(g.Stdout, "no run is waiting on it now; `ralph resume` continues the task with this answer")
	}
	return nil
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/store"
)

// HumanOptions are the flags of ralph approve and ralph reject.
type HumanOptions struct {
	Response string
}

// AddFlags registers the answer flags on cmd.
func (o *HumanOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Response, "response", "", "the answer's `TEXT`: needed to approve a text or select request; otherwise a note kept with the answer")
}

func newPendingCommand(g *Globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List the requests waiting for a human",
		Long: `List the open requests a plan's <Human> made: what the run asks, and how to
answer it (ralph approve ID, ralph reject ID). Works while a run is going.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPending(cmd.Context(), g, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the requests as a JSON array")
	return cmd
}

func runPending(ctx context.Context, g *Globals, asJSON bool) error {
	_, st, err := openRunStore(ctx, g)
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
		fmt.Fprintf(g.Stdout, "%d\t%s\t%s\n", r.ID, r.Type, trimOneLine(r.Prompt, 100))
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

func newApproveCommand(g *Globals) *cobra.Command {
	var o HumanOptions
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a pending request; the waiting run continues",
		Long: `Approve request ID (see ralph pending). The run waiting on it sees the
answer within a second and continues. A text request needs --response; a
select request needs --response naming one of its options.`,
		Example: `  ralph approve 3
  ralph approve 4 --response eu-west-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnswer(cmd.Context(), g, args[0], store.HumanApproved, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func newRejectCommand(g *Globals) *cobra.Command {
	var o HumanOptions
	cmd := &cobra.Command{
		Use:   "reject ID",
		Short: "Reject a pending request; the run follows the plan's onReject",
		Long: `Reject request ID (see ralph pending). The run waiting on it follows the
<Human>'s onReject: stop (the default; the run ends as rejected) or skip
(the next step is skipped).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnswer(cmd.Context(), g, args[0], store.HumanRejected, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// runAnswer resolves request arg with status. It only opens the store, so
// it works while a run holds the workspace lock.
func runAnswer(ctx context.Context, g *Globals, arg, status string, o HumanOptions) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id <= 0 {
		return usageError(fmt.Errorf("request id %q is not a number (see `ralph pending`)", arg))
	}
	ws, st, err := openRunStore(ctx, g)
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
	if errors.As(req.CheckAnswer(status, o.Response), &ae) {
		if ae.Request.Type == store.HumanSelect {
			return usageError(fmt.Errorf("request %d asks to choose one of %s: approve it with --response OPTION", id, strings.Join(req.Options, ", ")))
		}
		return usageError(fmt.Errorf("request %d asks for text: approve it with --response TEXT", id))
	}
	done, err := st.ResolveHuman(ctx, id, status, o.Response)
	var np *store.NotPendingError
	switch {
	case errors.Is(err, store.ErrNoHumanRequest):
		return failure.New(failure.Failed, fmt.Errorf("no pending request %d in this workspace (see `ralph pending`)", id))
	case errors.As(err, &np):
		return failure.New(failure.Failed, np)
	case err != nil:
		return err
	}
	fmt.Fprintf(g.Stdout, "%s request %d: %s\n", done.Status, done.ID, trimOneLine(done.Prompt, 100))
	if pid := ws.HolderPID(); pid != 0 {
		fmt.Fprintf(g.Stdout, "the run (pid %d) continues\n", pid)
	} else {
		fmt.Fprintln(g.Stdout, "no run is waiting on it now; `ralph resume` continues the task with this answer")
	}
	return nil
}

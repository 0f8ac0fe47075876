package cli

import (
	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/approval"
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
			return approval.Pending(cmd.Context(), g, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the requests as a JSON array")
	return cmd
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
			return approval.Answer(cmd.Context(), g, args[0], store.HumanApproved, o.Response)
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
			return approval.Answer(cmd.Context(), g, args[0], store.HumanRejected, o.Response)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/session"
)

func newNotifyCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "notify", Short: "The notification channels of ralph.toml's [notify]"}
	var wait time.Duration
	test := &cobra.Command{
		Use:   "test [CHANNEL]",
		Short: "Send a test message through each channel (or CHANNEL); Telegram and Slack wait for a tap on Approve",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return session.TestNotify(cmd.Context(), g, append(args, "")[0], wait)
		},
	}
	test.Flags().DurationVar(&wait, "wait", 2*time.Minute, "how long a two-way channel waits for the tap")
	cmd.AddCommand(test)
	return cmd
}

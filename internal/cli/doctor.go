package cli

import (
	"github.com/spf13/cobra"

	"github.com/ralph-harness/ralph/internal/doctor"
)

// DoctorOptions are the flags of ralph doctor.
type DoctorOptions struct {
	json bool
}

// AddFlags registers the flags on cmd.
func (o *DoctorOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as a JSON array")
}

func newDoctorCommand(g *Globals) *cobra.Command {
	var o DoctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check ralph's setup and end agent processes a dead ralph left running",
		Long: `Check what ralph needs and what a crash can leave behind:
  git       git is installed
  agents    each agent CLI on PATH, its version (--version) and whether
            it has credentials (variable and file names only, never
            values)
  auto      which agent --agent auto would pick
  agent     whether the configured agent (ralph.toml agent, or every
            agent of a fallback chain) can run
  lock      which ralph process, if any, drives this workspace
  orphans   agent process groups a ralph that died (kill -9, OOM) left
            running: each is ended (SIGTERM, then SIGKILL) with one line
  store     the database passes SQLite's integrity check

Exits 1, with the reason on stderr, when a check fails: for instance
when the configured agent's program is not on PATH.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return doctor.Run(cmd.Context(), g, o.json)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

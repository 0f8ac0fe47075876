package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is ralph's version, set at link time with
// -ldflags "-X github.com/ralph-harness/ralph/internal/cli.Version=v1.2.3".
var Version = "dev"

func newVersionCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ralph's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(g.Stdout, "ralph %s\n", version())
			return nil
		},
	}
}

// version is Version, or the module's version when built by go install.
func version() string {
	v := Version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return v
}

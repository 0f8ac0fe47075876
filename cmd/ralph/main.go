// Command ralph runs autonomous coding agents in loops until the work is
// verifiably done. See README.md and `ralph --help`.
package main

import (
	"os"

	"github.com/ralph-harness/ralph/internal/cli"
	"github.com/ralph-harness/ralph/internal/proc"
)

func main() {
	// ralph re-executes itself as the supervisor of each program it runs.
	proc.RunSupervisor()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command ralph runs autonomous coding agents in loops until the work is
// verifiably done. See README.md and `ralph --help`.
package main

import (
	"os"
	"path/filepath"

	"github.com/ralph-harness/ralph/internal/cli"
	// ralph re-executes itself as the supervisor of each program it
	// runs; this package's init does that before the heavy packages
	// initialise, and otherwise arms supervision for the run.
	_ "github.com/ralph-harness/ralph/internal/proc/supervisor"
)

func main() {
	// The agent's prompt tells it to run `ralph theme` and `ralph
	// snapshot`: the running binary comes first on the PATH that the
	// agent, and everything ralph starts, inherits.
	if exe, err := os.Executable(); err == nil {
		os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

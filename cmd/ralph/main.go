// Command ralph runs autonomous coding agents in loops until the work is
// verifiably done. See README.md and `ralph --help`.
package main

import (
	"os"

	"github.com/ralph-harness/ralph/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

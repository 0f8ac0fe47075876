// Command ralph runs autonomous coding agents in loops until the work is
// verifiably done. See README.md and `ralph --help`.
//
// RALPH_CPUPROFILE=FILE and RALPH_TRACE=FILE write a CPU profile and an
// execution trace of the whole command to FILE (for `go tool pprof` and
// `go tool trace`); neither is passed on to the programs ralph starts.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"

	"github.com/ralph-harness/ralph/internal/cli"
	"github.com/ralph-harness/ralph/internal/sandbox"
	// ralph re-executes itself as the supervisor of the programs it
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
	stop, err := profile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ralph:", err)
		os.Exit(1)
	}
	code := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	// The agents' private temporary directories kept for calls to come.
	sandbox.RemoveSpare()
	os.Exit(code)
}

// profile starts the CPU profile and the execution trace that
// RALPH_CPUPROFILE and RALPH_TRACE ask for, and returns what ends them.
func profile() (stop func(), err error) {
	cpu, tr := os.Getenv("RALPH_CPUPROFILE"), os.Getenv("RALPH_TRACE")
	// Not the agent's own `ralph` commands: they would write over the run's.
	os.Unsetenv("RALPH_CPUPROFILE")
	os.Unsetenv("RALPH_TRACE")
	var files []*os.File
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
		for _, f := range files {
			f.Close()
		}
	}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		files = append(files, f)
		if err := pprof.StartCPUProfile(f); err != nil {
			stop()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		stops = append(stops, pprof.StopCPUProfile)
	}
	if tr != "" {
		f, err := os.Create(tr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("trace: %w", err)
		}
		files = append(files, f)
		if err := trace.Start(f); err != nil {
			stop()
			return nil, fmt.Errorf("trace: %w", err)
		}
		stops = append(stops, trace.Stop)
	}
	return stop, nil
}

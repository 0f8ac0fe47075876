package session

import (
	"fmt"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/sandbox"
)

// Sandbox returns the sandbox a run confines its agents with under cfg's
// [sandbox], or nil when they run unconfined: then it says so, and why,
// in one line on g.Stderr. With [sandbox] required an agent that cannot be
// confined is a usage error instead (exit 2).
func Sandbox(g *Globals, cfg config.Config) (*sandbox.Settings, error) {
	c := cfg.Sandbox
	s := sandbox.Settings{Mode: sandbox.Mode(c.Mode), Read: c.Read, Write: c.Write, Network: sandbox.Network(c.Network), Required: c.Required}
	confine, note, err := sandbox.Decide(s, sandbox.Probe())
	if err != nil {
		return nil, failure.New(failure.Usage, err)
	}
	if !confine {
		fmt.Fprintf(g.Stderr, "ralph: %s\n", note)
		return nil, nil
	}
	return &s, nil
}

package cliagent

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/sandbox"
)

// Confinement is an agent call's sandbox as a backend uses it. A nil
// Confinement is an unconfined call: its methods then do nothing.
type Confinement struct {
	c       *sandbox.Confinement
	ruleset *os.File
	// reported are the paths Denied has reported in this call.
	mu       sync.Mutex
	reported map[string]bool
}

// sweptTmp removes, at this process's first call, the private temporary
// directories a ralph killed outright left.
var sweptTmp sync.Once

// Confine prepares the sandbox of one call of program under settings s,
// letting it also read the paths of read and write those of write; nil
// when s does not confine.
func Confine(s *sandbox.Settings, t sandbox.Target, read, write []string) (*Confinement, error) {
	sweptTmp.Do(func() { proc.SweepTemp(sandbox.TmpPrefix) })
	c, err := sandbox.Prepare(s, t)
	if err != nil || c == nil {
		return nil, err
	}
	c.Policy.Read = append(c.Policy.Read, read...)
	c.Policy.Write = append(c.Policy.Write, write...)
	rs, err := c.Policy.Ruleset()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Confinement{c: c, ruleset: rs, reported: map[string]bool{}}, nil
}

// Env returns the variables the confined program needs (its private
// TMPDIR).
func (c *Confinement) Env() []string {
	if c == nil {
		return nil
	}
	return c.c.Env()
}

// Ruleset returns the Landlock ruleset for proc.Spec.Ruleset, nil for an
// unconfined call; Close closes it.
func (c *Confinement) Ruleset() *os.File {
	if c == nil {
		return nil
	}
	return c.ruleset
}

// Close closes the ruleset and empties the call's temporary directory,
// which is kept for the next call (sandbox.Confinement.Close).
func (c *Confinement) Close() {
	if c != nil {
		c.ruleset.Close()
		_ = c.c.Close()
	}
}

// Watch returns emit, which also emits a KindSandbox event after each
// tool result (and, for a program whose output is its tool output, each
// text: all is set) that reports an access the sandbox refused.
func (c *Confinement) Watch(dir string, emit func(agent.Event), all ...bool) func(agent.Event) {
	if c == nil {
		return emit
	}
	text := len(all) > 0 && all[0]
	return func(e agent.Event) {
		emit(e)
		if e.Kind != agent.KindToolResult && !(text && e.Kind == agent.KindText) {
			return
		}
		c.Denied(dir, e, emit)
	}
}

// Denied emits a KindSandbox event for every access outside the sandbox
// that the text of e reports as refused, once per path and call.
func (c *Confinement) Denied(dir string, e agent.Event, emit func(agent.Event)) {
	if c == nil {
		return
	}
	for _, path := range c.c.Policy.Denials(e.Text, dir) {
		c.mu.Lock()
		seen := c.reported[path]
		c.reported[path] = true
		c.mu.Unlock()
		if seen {
			continue
		}
		in, _ := json.Marshal(map[string]string{"path": path})
		emit(agent.Event{Kind: agent.KindSandbox, Tool: e.Tool, ToolID: e.ToolID, Text: "the sandbox refused access to " + path, Input: in})
	}
}

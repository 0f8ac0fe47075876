package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// runRequest is what `ralph run` was asked to do, kept in
// .ralph/request.json. ralph run writes it before anything else, so that a
// run killed before its task reached the store can still be resumed: a
// request whose token the store does not know is started by ralph resume
// as the run would have started it.
type runRequest struct {
	// Token identifies this request; the task it creates records it.
	Token   string         `json:"token"`
	Message string         `json:"message"`
	Options requestOptions `json:"options"`
	At      time.Time      `json:"at"`
	// Worktree is set for ralph run --worktree: its task runs in a
	// worktree of its own.
	Worktree bool `json:"worktree,omitempty"`
}

// requestOptions are the flags of ralph run a resume needs to continue
// the task the same way.
type requestOptions struct {
	Agent            agentFlags    `json:"agent"`
	MaxIterations    int           `json:"max_iterations,omitempty"`
	MaxCost          float64       `json:"max_cost,omitempty"`
	MaxDuration      time.Duration `json:"max_duration,omitempty"`
	IterationTimeout time.Duration `json:"iteration_timeout,omitempty"`
	IdleTimeout      time.Duration `json:"idle_timeout,omitempty"`
}

// requestOptions returns the flags to keep for a resume.
func (o *RunOptions) requestOptions() requestOptions {
	return requestOptions{
		Agent: o.agent, MaxIterations: o.maxIterations, MaxCost: o.maxCost,
		MaxDuration: o.maxDuration, IterationTimeout: o.iterationTimeout, IdleTimeout: o.idleTimeout,
	}
}

// inherit takes the kept flags for those not given on this command line.
func (o *RunOptions) inherit(r requestOptions) {
	if o.agent == (agentFlags{}) {
		o.agent = r.Agent
	}
	if o.maxIterations == 0 {
		o.maxIterations = r.MaxIterations
	}
	if o.maxCost == 0 {
		o.maxCost = r.MaxCost
	}
	if o.maxDuration == 0 {
		o.maxDuration = r.MaxDuration
	}
	if o.iterationTimeout == 0 {
		o.iterationTimeout = r.IterationTimeout
	}
	if o.idleTimeout == 0 {
		o.idleTimeout = r.IdleTimeout
	}
}

// newRequest returns a request for message with a fresh token.
func newRequest(message string, o *RunOptions) (*runRequest, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("request token: %w", err)
	}
	return &runRequest{Token: hex.EncodeToString(b), Message: message, Options: o.requestOptions(), At: time.Now().UTC()}, nil
}

// save writes the request atomically.
func (r *runRequest) save(ws *workspace.Workspace) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := ws.Write(workspace.Request, string(data)+"\n"); err != nil {
		return fmt.Errorf("write .ralph/%s: %w", workspace.Request, err)
	}
	return nil
}

// loadRequest reads the latest request; nil when there is none or it
// cannot be read (a resume then goes by the store alone).
func loadRequest(ws *workspace.Workspace) *runRequest {
	data, err := ws.Read(workspace.Request)
	if err != nil || data == "" {
		return nil
	}
	var r runRequest
	if err := json.Unmarshal([]byte(data), &r); err != nil || r.Token == "" || r.Message == "" {
		return nil
	}
	return &r
}

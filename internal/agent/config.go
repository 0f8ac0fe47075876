package agent

import (
	"errors"
	"time"
)

// Config configures a backend that runs an agent CLI. Each backend reads
// the fields that apply to its tool and documents the rest as ignored.
type Config struct {
	// Binary is the program to run, a name looked up on PATH or a path.
	// Empty means the backend's usual name (claude, codex, …).
	Binary string
	// Args are extra arguments, added after the backend's own.
	Args []string
	// Model is the model to ask for; empty leaves the tool's default.
	Model string
	// Env is added to the agent's environment (KEY=VALUE), after the
	// parent's environment with the nested-agent variables removed.
	Env []string
	// MaxTurns caps the agent's turns in one iteration where the tool
	// supports it; zero leaves the tool's default.
	MaxTurns int
	// PermissionMode is how much the agent may do without asking. Empty
	// means the backend's autonomous default, which each backend states
	// in its package documentation.
	PermissionMode string
	// AllowedTools overrides the tools a backend pre-approves, where the
	// tool has such a list (claude, amp).
	AllowedTools []string
	// Sandbox is the sandbox mode where the tool has one (codex); empty
	// means workspace-write.
	Sandbox string
	// KillGrace is how long the agent's process group has between SIGTERM
	// and SIGKILL when it is stopped; zero means 2 seconds.
	KillGrace time.Duration
}

// ErrIdle means the agent printed nothing for longer than
// Request.IdleTimeout and its whole process group was killed.
var ErrIdle = errors.New("agent idle for longer than the idle timeout")

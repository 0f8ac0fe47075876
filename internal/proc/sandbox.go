package proc

import (
	"errors"
	"os"

	"github.com/ralph-harness/ralph/internal/sandbox"
)

// sandboxEnv carries Spec.Sandbox, the encoded policy, to the supervisor.
const sandboxEnv = "RALPH_SANDBOX_POLICY"

// errNoSupervisor is Run's error for a confined program it could only
// start directly: nothing would be left to apply the policy.
var errNoSupervisor = errors.New("sandbox: the program cannot be confined without ralph's supervisor (no /proc, or RunSupervisor not called)")

// sandboxSpecEnv returns the variable that hands s's policy to the
// supervisor, none when s is not confined.
func sandboxSpecEnv(s Spec) []string {
	if s.Sandbox == "" {
		return nil
	}
	return []string{sandboxEnv + "=" + s.Sandbox}
}

// confineSelf applies the policy the supervisor was handed, if any, and
// removes it from the environment the program inherits. It runs in the
// supervisor right before it starts the program.
func confineSelf() error {
	v, ok := os.LookupEnv(sandboxEnv)
	if !ok {
		return nil
	}
	_ = os.Unsetenv(sandboxEnv)
	p, err := sandbox.Decode(v)
	if err != nil {
		return err
	}
	return sandbox.Apply(p)
}

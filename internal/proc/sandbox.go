package proc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
)

// sandboxEnv tells the supervisor which of its file descriptors is the
// Landlock ruleset (Spec.Ruleset) to enforce before it starts the program.
const sandboxEnv = "RALPH_SANDBOX_FD"

// rulesetFD is the ruleset's descriptor in the supervisor: the first of
// cmd.ExtraFiles.
const rulesetFD = 3

// errNoSupervisor is Run's error for a confined program it could only
// start directly: nothing would be left to enforce the ruleset.
var errNoSupervisor = errors.New("sandbox: the program cannot be confined without ralph's supervisor (no /proc, or RunSupervisor not called)")

// handOver gives the supervisor cmd the ruleset of s, if any: as its
// descriptor 3, named in its environment.
func handOver(cmd *exec.Cmd, s Spec) {
	if s.Ruleset == nil {
		return
	}
	cmd.ExtraFiles = []*os.File{s.Ruleset}
	cmd.Env = append(cmd.Env, sandboxEnv+"="+strconv.Itoa(rulesetFD))
}

package doctor

import (
	"context"
	"fmt"

	"github.com/ralph-harness/ralph/internal/sandbox"
)

// checkSandbox reports whether agents will run confined ([sandbox]) and
// the kernel's Landlock ABI: a warning when they will not, a failure when
// [sandbox] required = true and they cannot be.
func checkSandbox(_ context.Context, env *doctorEnv) []finding {
	st := sandbox.Probe()
	c := env.cfg.Sandbox
	s := sandbox.Settings{Mode: sandbox.Mode(c.Mode), Network: sandbox.Network(c.Network), Required: c.Required}
	confine, note, err := sandbox.Decide(s, st)
	switch {
	case err != nil:
		return []finding{{Status: findingFail, Message: err.Error()}}
	case !confine:
		return []finding{{Status: findingWarn, Message: fmt.Sprintf("%s (%s)", note, abiText(st))}}
	}
	return []finding{{Status: findingOK, Message: fmt.Sprintf("agents run confined to their workspace (Landlock ABI %d, network %s)", st.ABI, c.Network)}}
}

func abiText(st sandbox.Status) string {
	if st.ABI == 0 {
		return "no Landlock ABI"
	}
	return fmt.Sprintf("Landlock ABI %d", st.ABI)
}

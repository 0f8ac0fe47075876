package proc

import (
	"fmt"
	"strings"
)

// EndedNote says in one sentence which processes that left the group Run
// ended (Spec.EndEscaped), or "" when it ended none: for an agent, whose
// background processes must not outlive its turn.
func (r Result) EndedNote() string {
	if len(r.Ended) == 0 {
		return ""
	}
	return fmt.Sprintf("ralph ended %d process(es) that left the agent's process group and were still running when it finished: %s", len(r.Ended), listEscapees(r.Ended))
}

// listEscapees names each process: "pid 12 (sleep 300), pid 13".
func listEscapees(es []Escapee) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "pid %d", e.PID)
		if e.Command != "" {
			fmt.Fprintf(&b, " (%s)", e.Command)
		}
	}
	return b.String()
}

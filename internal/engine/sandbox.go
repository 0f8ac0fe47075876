package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ralph-harness/ralph/internal/store"
)

// recordSandbox records, at the start of a task, how its agent is
// confined: a sandbox-policy event whose data is the [sandbox] settings
// the run applies (null when the agent runs unconfined). It is not shown:
// the run's first line already says when the agent is not confined.
func (e *Engine) recordSandbox(r *run) {
	text := "the agent runs unconfined"
	if s := e.opt.Sandbox; s != nil {
		text = fmt.Sprintf("the agent runs confined to its workspace (network %s)", cmp.Or(string(s.Network), "open"))
		if len(s.Read) > 0 {
			text += "; also readable: " + strings.Join(s.Read, ", ")
		}
		if len(s.Write) > 0 {
			text += "; also writable: " + strings.Join(s.Write, ", ")
		}
	}
	data, _ := json.Marshal(e.opt.Sandbox)
	if _, err := e.st.AddEvent(context.Background(), store.Event{TaskID: r.taskID, Iteration: r.iteration, Source: store.SourceHarness, Kind: "sandbox-policy", Text: text, Data: string(data)}); err != nil {
		e.log.Error("record event", "err", err)
	}
}

package temporalrun

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/proc"
)

// tailLines is how many of ralph's last output lines an activity keeps.
const tailLines = 20

// runRalph runs this worker's ralph with args in wt as a supervised
// process group, with alongside (the bridge, or the heartbeats) running
// until ralph ends. It returns ralph's outcome and the end of its output,
// at most maxTail bytes: payloads stay small, the transcript stays here.
// A ralph that could not run at all is an error; a non-zero exit is not.
func (r *Runner) runRalph(ctx context.Context, wt string, args []string, alongside func(context.Context)) (proc.Result, string, error) {
	self := r.Ralph
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return proc.Result{}, "", err
		}
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		alongside(actx)
	}()
	var mu sync.Mutex
	var tail []string
	keep := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		tail = append(tail, line)
		if len(tail) > tailLines {
			tail = tail[len(tail)-tailLines:]
		}
	}
	out, err := proc.Run(ctx, proc.Spec{Argv: append([]string{self}, args...), Dir: wt, OnLine: keep, OnStderrLine: keep})
	stop()
	<-done
	mu.Lock()
	said := strings.Join(tail, "\n")
	mu.Unlock()
	if len(said) > maxTail {
		said = said[len(said)-maxTail:]
	}
	if err != nil && out.ExitCode == 0 && ctx.Err() == nil {
		return out, said, fmt.Errorf("run ralph on the worker: %w", err)
	}
	return out, said, nil
}

// Package command runs any program as an agent: the prompt arrives on its
// standard input, and its standard output is the agent's text, the whole
// of which is its final message. ralph's system prompt is in the file
// named by $RALPH_SYSTEM_PROMPT_FILE (never mixed into the user prompt),
// and $RALPH_ITERATION holds the iteration number. A command agent reports
// no tool calls.
package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
)

// Agent runs a command.
type Agent struct {
	argv []string
	env  []string
	// scratch is where the system prompt file is written.
	scratch string
}

var _ agent.Agent = (*Agent)(nil)

// New returns an agent that runs argv with env added to its environment;
// scratch is a directory for per-iteration files (ralph's private logs dir).
func New(argv, env []string, scratch string) *Agent {
	return &Agent{argv: argv, env: env, scratch: scratch}
}

// Name returns "command".
func (a *Agent) Name() string { return "command" }

// Run runs the command once.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	if len(a.argv) == 0 {
		return agent.Result{}, errors.New("command agent: no command configured (set [agents.command] command = [argv…] in ralph.toml, or pass --command)")
	}
	sysFile := filepath.Join(a.scratch, "system-prompt.md")
	if err := os.MkdirAll(a.scratch, 0o755); err != nil {
		return agent.Result{}, fmt.Errorf("command agent: %w", err)
	}
	if err := os.WriteFile(sysFile, []byte(req.System), 0o644); err != nil {
		return agent.Result{}, fmt.Errorf("command agent: %w", err)
	}
	var out strings.Builder
	env := append([]string{"RALPH_SYSTEM_PROMPT_FILE=" + sysFile, "RALPH_ITERATION=" + strconv.Itoa(req.Iteration)}, a.env...)
	res, err := proc.Run(ctx, proc.Spec{
		Argv:        a.argv,
		Dir:         req.Dir,
		Env:         env,
		Stdin:       strings.NewReader(req.Prompt),
		IdleTimeout: req.IdleTimeout,
		OnLine: func(line string) {
			out.WriteString(line)
			out.WriteByte('\n')
			emit(agent.Event{Kind: agent.KindText, Text: line})
		},
	})
	if errors.Is(err, exec.ErrNotFound) {
		return agent.Result{}, fmt.Errorf("%w: %s", agent.ErrNotFound, a.argv[0])
	}
	if err != nil {
		return agent.Result{Final: strings.TrimSpace(out.String())}, err
	}
	final := strings.TrimSpace(out.String())
	if res.ExitCode != 0 {
		msg := res.Stderr
		if msg == "" {
			msg = lastLine(final)
		}
		emit(agent.Event{Kind: agent.KindError, Text: fmt.Sprintf("%s exited with status %d: %s", a.argv[0], res.ExitCode, msg)})
	}
	return agent.Result{Final: final}, nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

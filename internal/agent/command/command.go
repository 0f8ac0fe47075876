// Package command runs any program as an agent: the prompt arrives on its
// standard input, and its standard output is the agent's text, the whole
// of which is its final message. ralph's system prompt is in the file
// named by $RALPH_SYSTEM_PROMPT_FILE (never mixed into the user prompt;
// a file of the call's own, removed when it ends), and $RALPH_ITERATION
// holds the iteration number. A command agent reports no tool calls; one
// that exits non-zero has failed.
package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/sandbox"
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
	// Each call has a file of its own: parallel specs run several command
	// agents at once, each with its own role's prompt.
	if err := os.MkdirAll(a.scratch, 0o755); err != nil {
		return agent.Result{}, fmt.Errorf("command agent: %w", err)
	}
	f, err := os.CreateTemp(a.scratch, "system-prompt-*.md")
	if err != nil {
		return agent.Result{}, fmt.Errorf("command agent: %w", err)
	}
	sysFile := f.Name()
	defer os.Remove(sysFile)
	_, err = f.WriteString(req.System)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return agent.Result{}, fmt.Errorf("command agent: %w", err)
	}
	var out strings.Builder
	env := append([]string{"RALPH_SYSTEM_PROMPT_FILE=" + sysFile, "RALPH_ITERATION=" + strconv.Itoa(req.Iteration)}, a.env...)
	program, _ := exec.LookPath(a.argv[0])
	conf, err := cliagent.Confine(req.Sandbox, sandbox.Target{
		Dir: req.Dir, Program: program,
		Home: cliagent.LookupEnv(env, "HOME"), PATH: cliagent.LookupEnv(env, "PATH"),
		Ports: sandbox.PortsIn(append(os.Environ(), env...)),
	}, []string{sysFile}, nil)
	if err != nil {
		return agent.Result{}, fmt.Errorf("command agent: %w", err)
	}
	defer conf.Close()
	// The command's output is its tools' output: every line, standard
	// error's too, is watched for refused accesses. Both streams are
	// read at once, and emit takes one event at a time.
	var mu sync.Mutex
	emit = conf.Watch(req.Dir, locked(&mu, emit), true)
	res, err := proc.Run(ctx, proc.Spec{
		Argv:        a.argv,
		Dir:         req.Dir,
		Env:         append(env, conf.Env()...),
		Ruleset:     conf.Ruleset(),
		EndEscaped:  true, // nothing it detached outlives its turn
		Stdin:       strings.NewReader(req.Prompt),
		IdleTimeout: req.IdleTimeout,
		OnLine: func(line string) {
			out.WriteString(line)
			out.WriteByte('\n')
			emit(agent.Event{Kind: agent.KindText, Text: line})
		},
		OnStderrLine: func(line string) {
			conf.Denied(req.Dir, agent.Event{Text: line}, emit)
		},
	})
	if errors.Is(err, exec.ErrNotFound) {
		return agent.Result{}, fmt.Errorf("%w: %s", agent.ErrNotFound, a.argv[0])
	}
	if err != nil {
		return agent.Result{Final: strings.TrimSpace(out.String())}, err
	}
	if note := res.EndedNote(); note != "" {
		emit(agent.Event{Kind: agent.KindInfo, Text: note})
	}
	final := strings.TrimSpace(out.String())
	if res.ExitCode != 0 {
		// A crash is the agent failing, not an agent that finished
		// without calling a tool: the harness counts it as an error.
		msg := strings.TrimSpace(res.Stderr)
		if msg == "" {
			msg = lastLine(final)
		}
		err := fmt.Errorf("%s exited with status %d: %s", a.argv[0], res.ExitCode, msg)
		emit(agent.Event{Kind: agent.KindError, Text: err.Error()})
		return agent.Result{Final: final}, err
	}
	return agent.Result{Final: final}, nil
}

// locked returns emit, called under mu.
func locked(mu *sync.Mutex, emit func(agent.Event)) func(agent.Event) {
	return func(e agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		emit(e)
	}
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Package cliagent runs an agent CLI for one iteration: it finds the
// program, runs it through internal/proc (own process group, idle timeout,
// whole group killed on cancellation, nested-agent variables removed),
// hands each output line to the backend's Parser, and turns how the
// process ended into an agent.Result or an error the engine can branch on
// (agent.ErrNotFound, agent.ErrIdle, *agent.RateLimitError).
package cliagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/sandbox"
)

// Parser turns one backend's standard output into events. A Parser is
// used for one run, from one goroutine. It must not fail on any input:
// non-JSON lines and unknown events are skipped.
type Parser interface {
	// Line parses one line of standard output and emits what it reports.
	Line(line string, emit func(agent.Event))
	// Outcome returns the run's result from what the lines said, and the
	// failure they reported, if any: a message and whether it was a rate
	// or usage limit. Failed is false when the agent finished its work.
	Outcome() Outcome
}

// Outcome is what a Parser learnt from a run.
type Outcome struct {
	Result agent.Result
	// Failed says the agent reported that it could not do its work.
	Failed bool
	// Message explains the failure.
	Message string
	// RateLimited says the failure was a rate or usage limit.
	RateLimited bool
}

// Spec is one run of an agent CLI.
type Spec struct {
	// Name is the backend's name, used in errors.
	Name string
	// Argv is the program and its arguments.
	Argv []string
	// Dir is the working directory.
	Dir string
	// Env is added to the scrubbed environment.
	Env []string
	// Stdin is written to the program's standard input.
	Stdin string
	// IdleTimeout and KillGrace are as in proc.Spec.
	IdleTimeout time.Duration
	KillGrace   time.Duration
	// InstallHint says how to install the program when it is missing.
	InstallHint string
	// Sandbox confines the program; nil runs it unconfined.
	Sandbox *sandbox.Settings
	// StateDirs and StateFiles are the backend's own state in $HOME,
	// which a confined program may write.
	StateDirs, StateFiles []string
	// StateVars name variables that, set in Env or ralph's environment,
	// name a state directory of the backend elsewhere (CODEX_HOME).
	StateVars []string
	// Read and Write are further files and directories a confined
	// program may read, or write: the system prompt file or scratch
	// directory a backend made for it.
	Read, Write []string
}

// lookup returns the path of the program, or an error wrapping
// agent.ErrNotFound that names it and says how to install it.
func lookup(program, hint string) (string, error) {
	path, err := exec.LookPath(program)
	if err != nil {
		if hint != "" {
			return "", fmt.Errorf("%s: %w (install it with: %s)", program, agent.ErrNotFound, hint)
		}
		return "", fmt.Errorf("%s: %w", program, agent.ErrNotFound)
	}
	return path, nil
}

// Run runs s, feeding its output to p and its events to emit, and returns
// the iteration's result. The error is nil when the agent finished; it
// wraps agent.ErrNotFound for a missing program, agent.ErrIdle after an
// idle timeout, ctx.Err() when ctx ended, is a *agent.RateLimitError for a
// limit, and otherwise carries the agent's own message or the tail of its
// standard error.
func Run(ctx context.Context, logger *slog.Logger, s Spec, p Parser, emit func(agent.Event)) (agent.Result, error) {
	if emit == nil {
		emit = func(agent.Event) {}
	}
	if len(s.Argv) == 0 {
		return agent.Result{}, fmt.Errorf("%s: empty command", s.Name)
	}
	path, err := lookup(s.Argv[0], s.InstallHint)
	if err != nil {
		return agent.Result{}, err
	}
	conf, err := Confine(s.Sandbox, sandbox.Target{
		Dir: s.Dir, Program: path, StateDirs: s.StateDirs, StateFiles: s.StateFiles,
		Home: LookupEnv(s.Env, "HOME"), PATH: LookupEnv(s.Env, "PATH"),
		Ports: sandbox.PortsIn(append(os.Environ(), s.Env...)),
	}, s.Read, append(stateVarDirs(s.Env, s.StateVars), s.Write...))
	if err != nil {
		return agent.Result{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	defer conf.Close()
	emit = conf.Watch(s.Dir, emit)
	var stdin io.Reader = strings.NewReader(s.Stdin)
	logger.Debug("start agent", "argv0", s.Argv[0], "args", len(s.Argv)-1, "dir", s.Dir, "sandbox", conf != nil)
	res, err := proc.Run(ctx, proc.Spec{
		Argv:        s.Argv,
		Dir:         s.Dir,
		Env:         append(append([]string(nil), s.Env...), conf.Env()...),
		Stdin:       stdin,
		OnLine:      func(line string) { p.Line(line, emit) },
		IdleTimeout: s.IdleTimeout,
		KillGrace:   s.KillGrace,
		Ruleset:     conf.Ruleset(),
		// What the agent started in the background and detached ends
		// with its turn: it could otherwise go on writing .ralph/ or the
		// tree after the harness has checked them.
		EndEscaped: true,
	})
	if note := res.EndedNote(); note != "" {
		emit(agent.Event{Kind: agent.KindInfo, Text: note})
	}
	out := p.Outcome()
	logger.Debug("agent ended", "exit", res.ExitCode, "duration", res.Duration, "err", err, "failed", out.Failed)
	switch {
	case errors.Is(err, proc.ErrIdle):
		return out.Result, fmt.Errorf("%s: %w (%s)", s.Name, agent.ErrIdle, s.IdleTimeout)
	case errors.Is(err, exec.ErrNotFound):
		return out.Result, fmt.Errorf("%s: %w", s.Argv[0], agent.ErrNotFound)
	case err != nil:
		return out.Result, fmt.Errorf("%s: %w", s.Name, err)
	}
	now := time.Now()
	if out.Failed || res.ExitCode != 0 {
		msg := out.Message
		if msg == "" {
			msg = res.Stderr
		}
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		text := msg
		if !out.RateLimited && !agent.IsRateLimit(msg) && agent.IsRateLimit(res.Stderr) {
			text = lastLines(res.Stderr, 5)
		}
		if out.RateLimited || agent.IsRateLimit(text) {
			rl := &agent.RateLimitError{Message: strings.TrimSpace(text)}
			if t, ok := agent.ParseResetTime(text, now); ok {
				rl.ResetAt = t
			}
			emit(agent.Event{Kind: agent.KindRateLimit, Text: rl.Message, ResetAt: rl.ResetAt})
			return out.Result, rl
		}
		if res.Stderr != "" && msg != res.Stderr {
			msg += "\n" + lastLines(res.Stderr, 20)
		}
		return out.Result, fmt.Errorf("%s failed (exit status %d): %s", s.Name, res.ExitCode, msg)
	}
	return out.Result, nil
}

// stateVarDirs are the directories the variables vars name in env (or
// ralph's environment).
func stateVarDirs(env, vars []string) []string {
	var dirs []string
	for _, v := range vars {
		if d := LookupEnv(env, v); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Tally keeps what every parser needs: the tool-call count, the last
// assistant text and usage. Wrap emit with Emit to count as events pass.
type Tally struct {
	ToolCalls int
	LastText  string
	Usage     agent.Usage
}

// Emit passes e to emit, counting tool calls and keeping the last text.
func (t *Tally) Emit(emit func(agent.Event), e agent.Event) {
	switch e.Kind {
	case agent.KindToolCall:
		t.ToolCalls++
	case agent.KindText:
		if strings.TrimSpace(e.Text) != "" {
			t.LastText = e.Text
		}
	}
	emit(e)
}

// Result returns the tally as a Result with final as the final message,
// or the last text when final is empty.
func (t *Tally) Result(final string) agent.Result {
	if final == "" {
		final = t.LastText
	}
	return agent.Result{Final: final, ToolCalls: t.ToolCalls, Usage: t.Usage}
}

// Binary returns the program cfg names, or def when cfg.Binary is empty.
func Binary(cfg agent.Config, def string) string {
	if cfg.Binary != "" {
		return cfg.Binary
	}
	return def
}

// Available reports whether program is on PATH (or is an executable path).
func Available(program string) bool {
	_, err := exec.LookPath(program)
	return err == nil
}

// Logger returns logger, or a logger that discards when it is nil, with
// the attributes every backend logs under: component=agent, agent=name.
func Logger(logger *slog.Logger, name string) *slog.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return logger.With("component", "agent", "agent", name)
}

// WriteTemp writes content to a new temporary file named after pattern
// (as in os.CreateTemp) and returns its name; the caller removes it. On
// error no file is left behind.
func WriteTemp(pattern, content string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// DecodeLine unmarshals line into v when it is a JSON object and reports
// whether it was. Parsers skip the lines it rejects: progress output,
// warnings and anything else that is not an event.
func DecodeLine(line string, v any) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), v) == nil
}

// Text renders a JSON value as text: a string as itself, null or nothing
// as "", anything else as its JSON.
func Text(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Message renders an error value: an object's "message" field when it
// has one, otherwise as Text.
func Message(raw json.RawMessage) string {
	var obj struct {
		Message string `json:"message"`
	}
	if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return Text(raw)
}

// Backend describes one agent CLI: how it is named, found and installed.
type Backend struct {
	// Name is the backend's name as --agent spells it.
	Name string
	// DefaultBinary is the program run when Config.Binary is empty.
	DefaultBinary string
	// InstallHint says how to install the program.
	InstallHint string
	// StateDirs and StateFiles are where the program keeps its own state
	// in $HOME (".claude", ".claude.json"): the only places there a
	// confined agent may write.
	StateDirs, StateFiles []string
	// StateVars name variables that move a state directory (CODEX_HOME).
	StateVars []string
}

// Available reports whether the program cfg configures is installed.
func (b Backend) Available(cfg agent.Config) bool {
	return Available(Binary(cfg, b.DefaultBinary))
}

// Base is what the Agent of every CLI backend embeds: the backend, the
// configuration it was built with, and its logger.
type Base struct {
	Backend Backend
	Config  agent.Config
	Logger  *slog.Logger
}

// NewBase returns the Base of backend b configured by cfg, logging to
// logger (nil discards) under b's name.
func NewBase(b Backend, cfg agent.Config, logger *slog.Logger) Base {
	return Base{Backend: b, Config: cfg, Logger: Logger(logger, b.Name)}
}

// Name returns the backend's name.
func (b *Base) Name() string { return b.Backend.Name }

// Program returns the program to run: Config.Binary, or the backend's
// default.
func (b *Base) Program() string { return Binary(b.Config, b.Backend.DefaultBinary) }

// Spec returns the run of argv for req: in req.Dir, with Config.Env
// (shared: copy it before appending), req's idle timeout, Config's kill
// grace and the backend's install hint.
func (b *Base) Spec(req agent.Request, argv []string) Spec {
	return Spec{
		Name:        b.Backend.Name,
		Argv:        argv,
		Dir:         req.Dir,
		Env:         b.Config.Env,
		IdleTimeout: req.IdleTimeout,
		KillGrace:   b.Config.KillGrace,
		InstallHint: b.Backend.InstallHint,
		Sandbox:     req.Sandbox,
		StateDirs:   b.Backend.StateDirs,
		StateFiles:  b.Backend.StateFiles,
		StateVars:   b.Backend.StateVars,
	}
}

// SystemFile writes system to a temporary file, for a CLI that reads its
// system prompt from a file named in its environment, and returns the
// file's name and a function removing it: "" and a no-op when system is
// empty. name is the backend's.
func SystemFile(name, system string) (string, func(), error) {
	if system == "" {
		return "", func() {}, nil
	}
	file, err := WriteTemp("ralph-"+name+"-system-*.md", system)
	if err != nil {
		return "", nil, fmt.Errorf("%s system prompt: %w", name, err)
	}
	return file, func() { os.Remove(file) }, nil
}

// LookupEnv returns the value of the last NAME=value in env, else the
// value of name in ralph's own environment.
func LookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return os.Getenv(name)
}

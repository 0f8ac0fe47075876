// Package script is a scripted stand-in for a model, for the demo and for
// tests. A script is JSON:
//
//	{"iterations": [{"actions": [ACTION, …], "final": "text"}, …]}
//
// where an ACTION is one of
//
//	{"tool": "write",  "path": P, "content": C}
//	{"tool": "append", "path": P, "content": C}
//	{"tool": "delete", "path": P}
//	{"tool": "shell",  "argv": [PROGRAM, ARG, …]}
//	{"tool": "sleep",  "seconds": N}
//	{"tool": "rate_limit", "seconds": N}
//	{"tool": "prompt", "path": P}
//
// A rate_limit action makes the first attempt at its iteration fail as a
// provider's rate limit lifting in N seconds, as a real agent's would; the
// harness waits and retries the iteration, and the retry goes past it.
//
// A prompt action writes the prompt the iteration was given (the user
// prompt, as the harness built it) to P, so a shell action after it can
// read what a real agent would: the spec, the paths, the feedback.
//
// An iteration may also say what it cost: {"actions": …, "final": …,
// "cost_usd": 0.25}.
//
// A script may give the one answer the agent makes when asked a single
// question without tools, as the task parser asks: {"answer": TEXT,
// "iterations": …}. Without one the agent does not answer single
// questions (Answers reports false).
//
// Iteration k of a task performs entry k for real in the workspace (the
// last entry repeats when the script runs out), reports each action as a
// tool call with its input and its result, and ends with final as the
// final message. Paths are relative to the workspace; a path that leaves
// it is refused when the script is loaded. A shell action's argv is run
// directly, never through a shell.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/proc"
)

// Script is a parsed script file.
type Script struct {
	// Answer is the reply to a single question (Agent.Complete): a JSON
	// string is the reply's text, any other JSON value is replied as
	// written. Absent means the script answers none.
	Answer     json.RawMessage `json:"answer,omitempty"`
	Iterations []Iteration     `json:"iterations"`
}

// Iteration is what the stand-in does in one iteration.
type Iteration struct {
	Actions []Action `json:"actions"`
	Final   string   `json:"final"`
	// CostUSD, when set, is reported as the iteration's cost, as a real
	// agent reports what its model calls cost.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Action is one tool call.
type Action struct {
	Tool    string   `json:"tool"`
	Path    string   `json:"path,omitempty"`
	Content string   `json:"content,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
}

// Parse reads and checks a script.
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if len(s.Iterations) == 0 {
		return nil, errors.New("parse script: no iterations")
	}
	for i, it := range s.Iterations {
		for j, a := range it.Actions {
			if err := a.check(); err != nil {
				return nil, fmt.Errorf("script iteration %d action %d: %w", i+1, j+1, err)
			}
		}
	}
	return &s, nil
}

func (a Action) check() error {
	switch a.Tool {
	case "write", "append", "delete", "prompt":
		if a.Path == "" {
			return fmt.Errorf("%s needs a path", a.Tool)
		}
		if filepath.IsAbs(a.Path) || !filepath.IsLocal(filepath.FromSlash(a.Path)) {
			return fmt.Errorf("path %q is outside the workspace", a.Path)
		}
	case "shell":
		if len(a.Argv) == 0 {
			return errors.New("shell needs an argv")
		}
	case "sleep", "rate_limit":
		if a.Seconds < 0 {
			return fmt.Errorf("%s needs a non-negative number of seconds", a.Tool)
		}
	default:
		return fmt.Errorf("unknown tool %q (want write, append, delete, shell, sleep, rate_limit or prompt)", a.Tool)
	}
	return nil
}

// Load reads a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Agent runs a script.
type Agent struct {
	script *Script
	mu     sync.Mutex
	// limited records the iterations whose rate limit has been served.
	limited map[int]bool
}

var _ agent.Agent = (*Agent)(nil)

// New returns an agent that plays s.
func New(s *Script) *Agent { return &Agent{script: s, limited: map[int]bool{}} }

// Name returns "script".
func (a *Agent) Name() string { return "script" }

// Answers reports whether the script gives an answer to single questions.
func (a *Agent) Answers() bool { return len(a.script.Answer) > 0 }

// Complete answers one question without tools, as a CLI agent's
// single-answer mode does: it returns the script's answer, or an error
// when the script has none.
func (a *Agent) Complete(ctx context.Context, system, user string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(a.script.Answer) == 0 {
		return "", errors.New("the script gives no answer to single questions")
	}
	var text string
	if err := json.Unmarshal(a.script.Answer, &text); err == nil {
		return text, nil
	}
	return string(a.script.Answer), nil
}

// Run performs the script's entry for req.Iteration.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	k := req.Iteration - 1
	if k < 0 {
		k = 0
	}
	if k >= len(a.script.Iterations) {
		k = len(a.script.Iterations) - 1
	}
	it := a.script.Iterations[k]
	var res agent.Result
	for i, act := range it.Actions {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if act.Tool == "rate_limit" {
			a.mu.Lock()
			served := a.limited[req.Iteration]
			a.limited[req.Iteration] = true
			a.mu.Unlock()
			if served {
				continue
			}
			reset := time.Now().Add(time.Duration(act.Seconds * float64(time.Second)))
			emit(agent.Event{Kind: agent.KindRateLimit, Text: "scripted rate limit", ResetAt: reset})
			return res, &agent.RateLimitError{ResetAt: reset, Message: "scripted rate limit"}
		}
		input, _ := json.Marshal(act)
		id := fmt.Sprintf("script-%d-%d", req.Iteration, i+1)
		emit(agent.Event{Kind: agent.KindToolCall, Tool: act.Tool, ToolID: id, Input: input})
		res.ToolCalls++
		if act.Tool == "prompt" {
			act = Action{Tool: "write", Path: act.Path, Content: req.Prompt}
		}
		out, err := perform(ctx, req.Dir, act, req.IdleTimeout)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if errors.Is(err, proc.ErrIdle) {
			return res, err
		}
		ev := agent.Event{Kind: agent.KindToolResult, Tool: act.Tool, ToolID: id, Text: out}
		if err != nil {
			ev.IsError, ev.Text = true, err.Error()
		}
		emit(ev)
	}
	if it.Final != "" {
		emit(agent.Event{Kind: agent.KindText, Text: it.Final})
	}
	if it.CostUSD > 0 {
		res.Usage.CostUSD = it.CostUSD
		emit(agent.Event{Kind: agent.KindUsage, Usage: &res.Usage})
	}
	res.Final = it.Final
	return res, nil
}

// perform runs one action; a shell action is killed after idle without
// output (zero means no limit).
func perform(ctx context.Context, root string, a Action, idle time.Duration) (string, error) {
	switch a.Tool {
	case "write", "append", "delete":
		path, err := confine(root, a.Path)
		if err != nil {
			return "", err
		}
		switch a.Tool {
		case "write":
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path), os.WriteFile(path, []byte(a.Content), 0o644)
		case "append":
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return "", err
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return "", err
			}
			_, err = f.WriteString(a.Content)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return fmt.Sprintf("appended %d bytes to %s", len(a.Content), a.Path), err
		default:
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			return "deleted " + a.Path, nil
		}
	case "shell":
		var out strings.Builder
		collect := func(l string) { out.WriteString(l + "\n") }
		res, err := proc.Run(ctx, proc.Spec{Argv: a.Argv, Dir: root, IdleTimeout: idle, OnLine: collect, OnStderrLine: collect, EndEscaped: true})
		if err != nil {
			return "", err
		}
		if note := res.EndedNote(); note != "" {
			out.WriteString("warning: " + note + "\n")
		}
		if note := res.EscapeNote(); note != "" {
			out.WriteString("warning: " + note + "\n")
		}
		if res.ExitCode != 0 {
			return out.String(), fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(out.String()))
		}
		return out.String(), nil
	case "sleep":
		t := time.NewTimer(time.Duration(a.Seconds * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
			return "slept", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return "", fmt.Errorf("unknown tool %q", a.Tool)
}

// confine resolves rel inside root, refusing anything that leaves it,
// through symlinks too.
func confine(root, rel string) (string, error) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("path %q is outside the workspace", rel)
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	// Resolve the deepest existing ancestor: a symlinked directory must
	// not lead out of the workspace.
	dir := filepath.Dir(path)
	for {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			r, err := filepath.Rel(realRoot, real)
			if err != nil || !filepath.IsLocal(r) && r != "." {
				return "", fmt.Errorf("path %q leads outside the workspace", rel)
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			if r, err := filepath.Rel(realRoot, real); err != nil || !filepath.IsLocal(r) {
				return "", fmt.Errorf("path %q leads outside the workspace", rel)
			}
		}
	}
	return path, nil
}

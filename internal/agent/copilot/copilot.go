// Package copilot runs GitHub Copilot CLI (the copilot program,
// @github/copilot) as a ralph backend.
//
// Each iteration runs
//
//	copilot -p PROMPT --output-format json --allow-all-tools --no-ask-user
//	        --no-auto-update --usage-output-file FILE [--model MODEL] [ARGS…]
//
// in the workspace, and turns the JSONL events into ralph events (see
// Parser). Token usage is not in the event stream: ralph reads it from
// the file --usage-output-file writes when the run ends. Copilot reports
// premium requests, not dollars, so no cost is recorded.
//
// Copilot CLI needs a GitHub login with a Copilot plan, or a model of your
// own: COPILOT_PROVIDER_BASE_URL (an OpenAI-compatible endpoint),
// COPILOT_PROVIDER_API_KEY and COPILOT_MODEL in [agents.copilot] env run it
// without any GitHub account.
//
// The system prompt: Copilot CLI has no system-prompt option; it reads
// instruction files into its system prompt, and COPILOT_CUSTOM_INSTRUCTIONS_DIRS
// adds directories to search for them. ralph writes its system prompt to
// .github/instructions/ralph.instructions.md in a temporary directory and
// adds that directory to the list for the run.
//
// Permissions: --allow-all-tools (required without a terminal) lets the
// agent edit files and run commands without asking; file access outside
// the workspace (and the system temporary directory) stays refused, as
// Copilot CLI does by default. Config.PermissionMode "allow-all" passes
// --allow-all instead (paths and URLs too). --no-ask-user removes the tool
// that would wait for an answer nobody gives. Config.MaxTurns and
// Config.AllowedTools are ignored.
package copilot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/agent/cliagent"
)

// Name is the backend's name as --agent spells it.
const Name = "copilot"

// DefaultBinary is the program run when Config.Binary is empty.
const DefaultBinary = "copilot"

// InstallHint says how to install GitHub Copilot CLI.
const InstallHint = "npm install -g @github/copilot"

// InstructionsVar is the variable listing extra instruction directories.
const InstructionsVar = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"

// backend tells cliagent how the program is named, found and installed.
var backend = cliagent.Backend{Name: Name, DefaultBinary: DefaultBinary, InstallHint: InstallHint,
	StateDirs: []string{".copilot", ".cache/copilot"}, StateVars: []string{"COPILOT_HOME"}}

// Agent is the GitHub Copilot CLI backend.
type Agent struct{ cliagent.Base }

var _ agent.Agent = (*Agent)(nil)

// New returns a GitHub Copilot CLI backend configured by cfg.
func New(cfg agent.Config, logger *slog.Logger) *Agent {
	return &Agent{cliagent.NewBase(backend, cfg, logger)}
}

// Available reports whether the configured copilot program is installed.
func Available(cfg agent.Config) bool { return backend.Available(cfg) }

// Args returns the command line for req, program first; usageFile is
// where Copilot CLI writes its usage ("" for none).
func (a *Agent) Args(req agent.Request, usageFile string) []string {
	argv := []string{a.Program(), "-p", req.Prompt, "--output-format", "json"}
	if a.Config.PermissionMode == "allow-all" {
		argv = append(argv, "--allow-all")
	} else {
		argv = append(argv, "--allow-all-tools")
	}
	argv = append(argv, "--no-ask-user", "--no-auto-update")
	if usageFile != "" {
		argv = append(argv, "--usage-output-file", usageFile)
	}
	if a.Config.Model != "" {
		argv = append(argv, "--model", a.Config.Model)
	}
	return append(argv, a.Config.Args...)
}

// Run runs one iteration of Copilot CLI.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	if emit == nil {
		emit = func(agent.Event) {}
	}
	tmp, err := os.MkdirTemp("", "ralph-copilot-*")
	if err != nil {
		return agent.Result{}, fmt.Errorf("copilot: %w", err)
	}
	defer os.RemoveAll(tmp)
	env := append([]string(nil), a.Config.Env...)
	if req.System != "" {
		dir := filepath.Join(tmp, "instructions")
		file := filepath.Join(dir, ".github", "instructions", "ralph.instructions.md")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return agent.Result{}, fmt.Errorf("copilot system prompt: %w", err)
		}
		if err := os.WriteFile(file, []byte(req.System), 0o644); err != nil {
			return agent.Result{}, fmt.Errorf("copilot system prompt: %w", err)
		}
		dirs := dir
		if prev := cliagent.LookupEnv(a.Config.Env, InstructionsVar); prev != "" {
			dirs = prev + "," + dir
		}
		env = append(env, InstructionsVar+"="+dirs)
	}
	usageFile := filepath.Join(tmp, "usage.json")
	s := a.Spec(req, a.Args(req, usageFile))
	s.Env = env
	s.Write = []string{tmp}
	res, err := cliagent.Run(ctx, a.Logger, s, NewParser(), emit)
	if b, rerr := os.ReadFile(usageFile); rerr == nil {
		if u, ok := ParseUsage(b); ok {
			res.Usage = u
			emit(agent.Event{Kind: agent.KindUsage, Usage: &u})
		}
	}
	return res, err
}

// ParseUsage reads the file --usage-output-file writes: tokens summed
// over the models of modelMetrics. It reports false when the file holds
// no usage.
func ParseUsage(b []byte) (agent.Usage, bool) {
	var f struct {
		ModelMetrics map[string]struct {
			Usage struct {
				InputTokens      int64 `json:"inputTokens"`
				OutputTokens     int64 `json:"outputTokens"`
				CacheReadTokens  int64 `json:"cacheReadTokens"`
				CacheWriteTokens int64 `json:"cacheWriteTokens"`
				ReasoningTokens  int64 `json:"reasoningTokens"`
			} `json:"usage"`
		} `json:"modelMetrics"`
	}
	if json.Unmarshal(b, &f) != nil || len(f.ModelMetrics) == 0 {
		return agent.Usage{}, false
	}
	var u agent.Usage
	for _, m := range f.ModelMetrics {
		u = u.Add(agent.Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens + m.Usage.ReasoningTokens,
			CacheReadTokens: m.Usage.CacheReadTokens, CacheWriteTokens: m.Usage.CacheWriteTokens})
	}
	return u, true
}

// Package config reads ralph.toml, the optional configuration file at the
// repository root. Every setting has a default, so a workspace without the
// file works; a file that exists but cannot be read or parsed is an error
// that names the file and the line.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// FileName is the configuration file's name at the repository root.
const FileName = "ralph.toml"

// Config is ralph.toml.
type Config struct {
	// Agent is the backend: auto, claude, codex, opencode, gemini, qwen,
	// copilot, amp, api, command or script — or a fallback chain of them,
	// written in ralph.toml as a list (agent = ["claude", "codex"]) and
	// held here joined by commas ("claude,codex").
	Agent AgentChoice `toml:"agent"`
	// Model is passed to backends that choose a model.
	Model string `toml:"model"`
	// Promise is the text the agent's final message ends with to ask for
	// completion.
	Promise string `toml:"promise"`

	Limits Limits `toml:"limits"`
	// Gates are the command gates, the [[gates]] entries. Load fills
	// them (the [gates] key also holds the [gates.build] table).
	Gates []Gate `toml:"-"`
	// Build is the [gates.build] table, nil when ralph.toml has none.
	// It configures the build-succeeds gate and opts a project that has
	// no App plan into it.
	Build *BuildGate `toml:"-"`
	// UI is the [gates.ui] table, nil when ralph.toml has none. It
	// configures the ui-renders gate and opts a project that has no App
	// plan into it.
	UI    *UIGate `toml:"-"`
	Stall Stall   `toml:"stall"`
	Theme Theme   `toml:"theme"`
	// RecipeDirs are extra recipe directories, searched after .ralph/recipes.
	RecipeDirs []string `toml:"recipe_dirs"`
	// Agents configures each backend by name: [agents.claude] and so on.
	Agents map[string]Backend `toml:"agents"`
	// Task configures how a message becomes task.md: [task].
	Task TaskParser `toml:"task"`
	// Notify is where people are told what happens: notify = [argv…]
	// (a command run when a human is needed or a run stalls, the message
	// its last argument), or a [notify] table with that command and the
	// channels [notify.telegram], [notify.ntfy], [notify.webhook].
	Notify Notify `toml:"-"`

	// Specs configures the spec pipeline (ralph specs run): [specs].
	Specs Specs `toml:"specs"`

	// Temporal configures running tasks and specs as Temporal workflows
	// (ralph run/specs run/worker --temporal): [temporal].
	Temporal Temporal `toml:"temporal"`

	// Guard says which files the gates depend on and what a change to
	// one by the agent does: [guard].
	Guard Guard `toml:"guard"`

	// Sandbox confines the agent's process to its workspace: [sandbox].
	Sandbox Sandbox `toml:"sandbox"`
}

// Sandbox is the [sandbox] table: how the agent's process is confined
// (internal/sandbox).
type Sandbox struct {
	// Mode is "workspace" (confine the agent to its workspace, the
	// default) or "off".
	Mode string `toml:"mode"`
	// Read and Write add paths the agent may read, or read and write:
	// absolute, or ~/… in the user's home (caches, toolchains).
	Read  []string `toml:"read"`
	Write []string `toml:"write"`
	// Network is "open" (the default) or "model": TCP connections only
	// to port 443 and the model endpoints' ports, and no listening.
	Network string `toml:"network"`
	// Required refuses to start a run whose agent cannot be confined.
	Required bool `toml:"required"`
}

func (s Sandbox) validate() error {
	switch s.Mode {
	case "workspace", "off":
	default:
		return fmt.Errorf("%s: [sandbox] mode = %q (want workspace or off)", FileName, s.Mode)
	}
	switch s.Network {
	case "open", "model":
	default:
		return fmt.Errorf("%s: [sandbox] network = %q (want open or model)", FileName, s.Network)
	}
	if s.Required && s.Mode == "off" {
		return fmt.Errorf("%s: [sandbox] required = true contradicts mode = \"off\"", FileName)
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read", s.Read}, {"write", s.Write}} {
		for _, p := range list.paths {
			if !filepath.IsAbs(p) && p != "~" && !strings.HasPrefix(p, "~/") {
				return fmt.Errorf("%s: [sandbox] %s = %q: give an absolute path or one in ~/", FileName, list.key, p)
			}
		}
	}
	return nil
}

// Guard is the [guard] table: the files the gates depend on, beyond
// ralph.toml and the files a gate's argv names, and what happens when the
// agent changes one during a task.
type Guard struct {
	// Protect are globs (** for any depth) of files the agent must not
	// delete or modify without a say-so; set, they replace
	// DefaultProtect. New files are held only when they change how the
	// tests run (a test runner's configuration, a Go TestMain).
	Protect []string `toml:"protect"`
	// OnChange is what a change to a protected file does when the agent
	// asks to finish: "ask" (a person approves or rejects it), "restore"
	// (the files are put back), "fail" (the run ends) or "allow" (it is
	// recorded only).
	OnChange string `toml:"on_change"`
	// Timeout bounds how long "ask" waits; no answer rejects.
	Timeout Duration `toml:"timeout"`
}

// Guard policies for [guard] on_change.
const (
	GuardAsk     = "ask"
	GuardRestore = "restore"
	GuardFail    = "fail"
	GuardAllow   = "allow"
)

// DefaultProtect are the usual test layouts of Go, Python, JS/TS, Rust and
// Java: test files, test data and test runner configuration.
var DefaultProtect = []string{
	// Go
	"**/*_test.go", "**/testdata/**",
	// Python
	"**/test_*.py", "**/*_test.py", "**/tests/**", "**/conftest.py", "pytest.ini", "tox.ini",
	// JS/TS
	"**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/test/**",
	"**/jest.config.*", "**/vitest.config.*", "**/playwright.config.*", "**/karma.conf.*", "**/.mocharc*",
	// Rust: tests/** above; benches too
	"**/benches/**",
	// Java
	"**/src/test/**",
}

// Temporal is the [temporal] table: where the Temporal cluster is and how
// to reach it. Nothing here is secret: the API key is read from the
// environment variable APIKeyEnv names, never from ralph.toml.
type Temporal struct {
	// Address is the frontend's HOST:PORT; empty means Temporal is off
	// unless a command's --temporal flag names one.
	Address string `toml:"address"`
	// Namespace defaults to "default".
	Namespace string `toml:"namespace"`
	// TaskQueue defaults to "ralph".
	TaskQueue string `toml:"task_queue"`
	// TLSCert and TLSKey are a client certificate and key (PEM files)
	// for mTLS, as Temporal Cloud's certificate auth wants.
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
	// TLS turns TLS on without a client certificate (API-key auth turns
	// it on by itself).
	TLS bool `toml:"tls"`
	// APIKeyEnv names the environment variable holding an API key
	// (Temporal Cloud API-key auth).
	APIKeyEnv string `toml:"api_key_env"`
}

// Limits bound a run.
type Limits struct {
	MaxIterations    int      `toml:"max_iterations"`
	MaxDuration      Duration `toml:"max_duration"`
	MaxCost          float64  `toml:"max_cost"`
	IterationTimeout Duration `toml:"iteration_timeout"`
	IdleTimeout      Duration `toml:"idle_timeout"`
	// GateFailures ends the run after this many consecutive gate failures.
	GateFailures int `toml:"gate_failures"`
	// MaxWait caps one wait for a rate limit to lift.
	MaxWait Duration `toml:"max_wait"`
}

// Gate is a command gate: [[gates]] name, run = [argv…], timeout, dir.
type Gate struct {
	Name    string   `toml:"name"`
	Run     []string `toml:"run"`
	Dir     string   `toml:"dir"`
	Timeout Duration `toml:"timeout"`
	// Optional makes a failure a warning.
	Optional bool `toml:"optional"`
}

// BuildGate is [gates.build]: how the build-succeeds gate builds the app.
type BuildGate struct {
	// Use is "esbuild" (the default: bundle the entry in-process), "npm"
	// (run `npm run build` where package.json has a build script and
	// node_modules exists, esbuild otherwise) or "off".
	Use string `toml:"use"`
	// Entry is the file to bundle, relative to the root: a script or an
	// HTML page whose module scripts are bundled. Empty finds it.
	Entry string `toml:"entry"`
	// Missing says what a bare import of a package that is not in
	// node_modules is: "warn" (the default), "fail" or "ignore".
	Missing string `toml:"missing"`
	// Tsconfig is the tsconfig file to use for every file, relative to
	// the root; empty uses the nearest tsconfig.json of each file.
	Tsconfig string `toml:"tsconfig"`
	// Timeout bounds `npm run build` (default 5m).
	Timeout Duration `toml:"timeout"`
}

// UIGate is [gates.ui]: how the ui-renders gate loads the app in a
// browser.
type UIGate struct {
	// Browser is the Chromium or Chrome to use, a path or a name on
	// PATH; empty looks for chromium, chromium-browser and google-chrome.
	Browser string `toml:"browser"`
	// Required makes a missing browser a failure rather than a skip.
	Required bool `toml:"required"`
	// Off turns the gate off.
	Off bool `toml:"off"`
}

// Stall holds the stall detectors' thresholds.
type Stall struct {
	Repeat         int `toml:"repeat"`
	NoProgress     int `toml:"no_progress"`
	RepeatedErrors int `toml:"repeated_errors"`
}

// Theme configures the theme engine.
type Theme struct {
	// Stylesheet is where themes are written, relative to the root.
	Stylesheet string `toml:"stylesheet"`
}

// Backend configures one agent backend.
type Backend struct {
	// Binary is the program to run (default: the backend's usual name).
	Binary string `toml:"binary"`
	// Args are extra arguments; for the command backend, Command is the
	// whole argv.
	Args    []string `toml:"args"`
	Command []string `toml:"command"`
	Model   string   `toml:"model"`
	// Env is extra environment for the agent, KEY=VALUE.
	Env            []string `toml:"env"`
	PermissionMode string   `toml:"permission_mode"`
	MaxTurns       int      `toml:"max_turns"`
	// BaseURL and APIKeyEnv configure the api backend.
	BaseURL   string `toml:"base_url"`
	APIKeyEnv string `toml:"api_key_env"`
	Provider  string `toml:"provider"`
}

// TaskParser chooses how task.md is written: "auto" (the api agent's
// model when it is configured, else the run's own agent in one single
// answer when it has such a mode, else the template), "model" (the api
// agent's model) or "template" (never a model call).
type TaskParser struct {
	Parser string `toml:"parser"`
}

// Duration is a time.Duration written as "90s", "10m" or "1h30m".
type Duration struct{ time.Duration }

// UnmarshalText parses a duration.
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "" || s == "0" {
		d.Duration = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q (use forms like 90s, 10m, 1h30m)", s)
	}
	d.Duration = v
	return nil
}

// MarshalText writes a duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultPromise is the completion promise unless configured.
const DefaultPromise = "<promise>COMPLETE</promise>"

// Default returns the configuration of a workspace without ralph.toml.
func Default() Config {
	return Config{
		Agent:   "auto",
		Promise: DefaultPromise,
		Limits: Limits{
			MaxIterations:    20,
			IterationTimeout: Duration{30 * time.Minute},
			IdleTimeout:      Duration{10 * time.Minute},
			GateFailures:     5,
			MaxWait:          Duration{6 * time.Hour},
		},
		Stall:   Stall{Repeat: 3, NoProgress: 3, RepeatedErrors: 3},
		Theme:   Theme{Stylesheet: "src/index.css"},
		Specs:   DefaultSpecs(),
		Guard:   Guard{Protect: DefaultProtect, OnChange: GuardAsk, Timeout: Duration{30 * time.Minute}},
		Sandbox: Sandbox{Mode: "workspace", Network: "open"},
	}
}

// Load reads ralph.toml from root over the defaults. A missing file is not
// an error.
func Load(root string) (Config, error) {
	cfg := Default()
	path := filepath.Join(root, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("read %s: %w", FileName, err)
	}
	f := file{Config: cfg}
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return cfg, decodeError(err)
	}
	cfg = f.Config
	if err := decodeGates(md, f.Gates, &cfg); err != nil {
		return cfg, err
	}
	if err := decodeNotify(md, f.Notify, &cfg); err != nil {
		return cfg, err
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		k := keys[0].String()
		if strings.HasPrefix(k, "gates.") && !strings.HasPrefix(k, "gates.build") && !strings.HasPrefix(k, "gates.ui.") {
			return cfg, fmt.Errorf("%s: unknown setting %q (command gates are [[gates]] entries with name and run; write them before [gates.build])", FileName, k)
		}
		return cfg, fmt.Errorf("%s: unknown setting %q", FileName, k)
	}
	return cfg, cfg.validate()
}

// shellGate matches the decoder's complaint about run = "a string" in a
// [[gates]] entry, capturing the line.
var shellGate = regexp.MustCompile(`line (\d+) \(last key "gates\.run"\): incompatible types: TOML value has type string`)

// file is ralph.toml as written. The gates key takes two shapes: an array
// of [[gates]] tables (the command gates; TOML makes a [gates.build]
// written after them a sub-table of the last one), or a [gates] table
// holding only build (a [gates.build] with no [[gates]] before it).
type file struct {
	Config
	Gates  toml.Primitive `toml:"gates"`
	Notify toml.Primitive `toml:"notify"`
}

// gateEntry is one [[gates]] table, with the [gates.build] that TOML
// attaches to the last one.
type gateEntry struct {
	Gate
	Build *BuildGate `toml:"build"`
	UI    *UIGate    `toml:"ui"`
}

// decodeGates decodes the gates key into cfg.Gates and cfg.Build.
func decodeGates(md toml.MetaData, raw toml.Primitive, cfg *Config) error {
	if !md.IsDefined("gates") {
		return nil
	}
	if md.Type("gates") == "ArrayHash" {
		var entries []gateEntry
		if err := md.PrimitiveDecode(raw, &entries); err != nil {
			return decodeError(err)
		}
		for _, e := range entries {
			if e.Build != nil {
				cfg.Build = e.Build
			}
			if e.UI != nil {
				cfg.UI = e.UI
			}
			cfg.Gates = append(cfg.Gates, e.Gate)
		}
		return nil
	}
	var table struct {
		Build *BuildGate `toml:"build"`
		UI    *UIGate    `toml:"ui"`
	}
	if err := md.PrimitiveDecode(raw, &table); err != nil {
		return decodeError(err)
	}
	cfg.Build, cfg.UI = table.Build, table.UI
	return nil
}

// decodeError names the file and, for a syntax error, the line.
func decodeError(err error) error {
	if m := shellGate.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: a gate's run is an argv list, never a shell string: write run = [\"go\", \"test\", \"./...\"]", FileName, m[1])
	}
	var perr toml.ParseError
	if errors.As(err, &perr) {
		msg := perr.Message
		if strings.Contains(msg, "'gates'") {
			msg += " (write the [[gates]] entries before [gates.build])"
		}
		return fmt.Errorf("%s:%d: %s", FileName, perr.Position.Line, msg)
	}
	return fmt.Errorf("%s: %w", FileName, err)
}

func (c Config) validate() error {
	switch c.Task.Parser {
	case "", "auto", "model", "template":
	default:
		return fmt.Errorf("%s: [task] parser = %q (want auto, model or template)", FileName, c.Task.Parser)
	}
	for i, g := range c.Gates {
		if g.Name == "" {
			return fmt.Errorf("%s: gate %d has no name", FileName, i+1)
		}
		if len(g.Run) == 0 {
			return fmt.Errorf("%s: gate %q has no run = [argv…]", FileName, g.Name)
		}
	}
	if b := c.Build; b != nil {
		switch b.Use {
		case "", "esbuild", "npm", "off":
		default:
			return fmt.Errorf("%s: [gates.build] use = %q (want esbuild, npm or off)", FileName, b.Use)
		}
		switch b.Missing {
		case "", "warn", "fail", "ignore":
		default:
			return fmt.Errorf("%s: [gates.build] missing = %q (want warn, fail or ignore)", FileName, b.Missing)
		}
		if b.Timeout.Duration < 0 {
			return fmt.Errorf("%s: [gates.build] timeout must not be negative", FileName)
		}
	}
	if sheet := c.Theme.Stylesheet; sheet != "" && !filepath.IsLocal(sheet) {
		return fmt.Errorf("%s: [theme] stylesheet = %q: ralph writes only inside the repository; give a path relative to its root", FileName, sheet)
	}
	switch c.Guard.OnChange {
	case GuardAsk, GuardRestore, GuardFail, GuardAllow:
	default:
		return fmt.Errorf("%s: [guard] on_change = %q (want ask, restore, fail or allow)", FileName, c.Guard.OnChange)
	}
	if c.Guard.Timeout.Duration <= 0 {
		return fmt.Errorf("%s: [guard] timeout must be positive", FileName)
	}
	if err := c.Sandbox.validate(); err != nil {
		return err
	}
	l, st := c.Limits, c.Stall
	if err := CheckBounds(
		Int("[limits] max_iterations", l.MaxIterations), Float("[limits] max_cost", l.MaxCost),
		Dur("[limits] max_duration", l.MaxDuration.Duration), Dur("[limits] iteration_timeout", l.IterationTimeout.Duration),
		Dur("[limits] idle_timeout", l.IdleTimeout.Duration), Int("[limits] gate_failures", l.GateFailures),
		Dur("[limits] max_wait", l.MaxWait.Duration),
		Int("[stall] repeat", st.Repeat), Int("[stall] no_progress", st.NoProgress), Int("[stall] repeated_errors", st.RepeatedErrors),
	); err != nil {
		return fmt.Errorf("%s: %w", FileName, err)
	}
	if err := c.Notify.validate(); err != nil {
		return err
	}
	return c.Specs.validate()
}

// AgentChoice is the agent setting: one backend's name, or several
// joined by commas, the first run first and each next one when the one
// before runs out.
type AgentChoice string

// UnmarshalTOML accepts a name ("claude") or a list of names
// (["claude", "codex"]).
func (a *AgentChoice) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*a = AgentChoice(v)
		return nil
	case []any:
		var names []string
		for _, n := range v {
			s, ok := n.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return fmt.Errorf("agent: want a list of agent names, got %v", n)
			}
			names = append(names, strings.TrimSpace(s))
		}
		if len(names) == 0 {
			return errors.New("agent: the list of agents is empty")
		}
		*a = AgentChoice(strings.Join(names, ","))
		return nil
	}
	return fmt.Errorf("agent: want a name or a list of names, got %v", v)
}

// Template is the commented ralph.toml that `ralph init` writes.
const Template = `# ralph.toml — ralph's configuration. Every setting is optional.

# Which agent runs the iterations: auto, claude, codex, opencode, gemini,
# qwen, copilot, amp, api, command or script. auto picks the first installed
# CLI (claude, codex, opencode, gemini, qwen, copilot, amp), else api when an
# API key is set. amp needs Amp's own service and is untested offline.
# A list is a fallback chain: when one runs out (a usage limit that lifts
# later than [limits] max_wait, or a used-up quota), the next iteration runs
# on the next: agent = ["claude", "codex", "gemini"].
agent = "auto"
# model = "claude-sonnet-4-5"

# The text the agent's final message ends with to ask for completion.
# promise = "<promise>COMPLETE</promise>"

[limits]
max_iterations = 20
# max_duration = "2h"
# max_cost = 10.0          # US dollars; no cap unless set
iteration_timeout = "30m"
idle_timeout = "10m"       # kill the agent after this long without output
gate_failures = 5          # end the run after this many failed completions in a row

# Quality gates run when the agent asks to finish. Each is an argv, never
# a shell string. All must pass for the task to complete.
# [[gates]]
# name = "tests"
# run = ["go", "test", "./..."]
# timeout = "10m"

# build-succeeds: App plans always get it; a [gates.build] table opts any
# other project in. Write it after the [[gates]] entries.
# [gates.build]
# use = "esbuild"          # bundle the entry in-process (no Node needed);
#                          # "npm" runs "npm run build" where package.json has a
#                          # build script and node_modules exists; "off"
# entry = "src/main.tsx"   # default: index.html's module script, else
#                          # src/main.tsx, src/index.tsx, src/App.tsx…
# missing = "warn"         # a package not in node_modules: warn, fail or ignore
# tsconfig = "tsconfig.app.json"   # default: the nearest tsconfig.json, or the
#                          # one with paths that its "references" name
# timeout = "5m"           # for use = "npm"

# ui-renders: after build-succeeds passes, App plans get each <Screen> loaded
# in headless Chromium at 1280x800 and 390x844; [gates.ui] opts any other
# project in. Screenshots go to .ralph/preview/.
# [gates.ui]
# browser = "chromium"     # a path or a name on PATH; default: chromium,
#                          # chromium-browser, google-chrome on PATH
# required = false         # true: no browser fails the gate instead of skipping
# off = false

[stall]
repeat = 3                 # identical tool calls this many iterations in a row
no_progress = 3            # iterations with tool calls that change nothing
repeated_errors = 3        # the same error this many times

[theme]
stylesheet = "src/index.css"

# What the agent may not change without a say-so: ralph.toml, the files a
# gate's argv names, and the files these globs match (the default: the
# usual test layouts of Go, Python, JS/TS, Rust and Java). A deleted or
# modified one holds the completion; a new test is fine, a new conftest.py,
# runner config or Go TestMain is held too.
# [guard]
# protect = ["**/*_test.go", "**/testdata/**", "tests/**"]   # replaces the default
# on_change = "ask"        # ask: a person approves or rejects (the files come
#                          # back); restore: put them back; fail: end the run
#                          # (exit 14); allow: record only
# timeout = "30m"          # an unanswered ask rejects after this long

# The agent runs confined to the workspace (Linux, Landlock): it cannot
# read ~/.ssh, ~/.aws or your other repositories, nor write outside.
# [sandbox]
# mode = "workspace"       # or "off"
# read = ["~/go/pkg/mod"]  # more it may read: toolchains, module caches
# write = ["~/.cache/go-build"]   # more it may write
# network = "open"         # "model": TCP only to the model endpoints' ports and 443
# required = false         # true: refuse to run an agent that cannot be confined

# [agents.claude]
# binary = "claude"
# args = []
# permission_mode = "acceptEdits"

# [agents.api]             # the built-in agent: Anthropic or any OpenAI-compatible API
# provider = "anthropic"   # or "openai"; default: from which key is set
# model = "claude-sonnet-4-6"
# base_url = "http://localhost:11434/v1"   # Ollama, vLLM, llama.cpp…
# api_key_env = "ANTHROPIC_API_KEY"

# [task]
# parser = "auto"          # auto: the model turns your message into task.md when the
#                          # api agent is configured; "model" always; "template" never

# [agents.command]
# command = ["./my-agent", "--flag"]   # the prompt arrives on stdin

# The spec pipeline: ralph specs run [DIR].
[specs]
dir = "specs"
max_attempts = 3           # failed plan, implementation and verify attempts per spec
backoff = "10s"            # wait before a retry, doubling each time
parallel = 1               # specs at once, each in a git worktree (ralph specs run --parallel N)
# planner_promise = "<promise>COMPLETE</promise>"
# implementer_promise = "<promise>COMPLETE</promise>"
# pass_promise = "<promise>PASS</promise>"
# fail_promise = "<promise>FAIL</promise>"

# Run tasks and specs as Temporal workflows (ralph run/specs run/worker
# --temporal). Nothing secret here: the API key comes from the environment.
# [temporal]
# address = "localhost:7233"
# namespace = "default"
# task_queue = "ralph"
# tls_cert = "client.pem"         # mTLS (Temporal Cloud certificate auth)
# tls_key = "client.key"
# api_key_env = "TEMPORAL_API_KEY" # API-key auth; implies TLS
`

// ---------------------------------------------------------------------
// [specs]: the spec pipeline (SPEC §11). Kept apart from the loop's
// settings above; internal/spec reads it through internal/cli.
// ---------------------------------------------------------------------

// Default magic phrases of the spec pipeline.
const (
	// DefaultPassPromise ends a verifier's final message that accepts.
	DefaultPassPromise = "<promise>PASS</promise>"
	// DefaultFailPromise ends a verifier's final message that rejects.
	DefaultFailPromise = "<promise>FAIL</promise>"
)

// Specs configures ralph specs run.
type Specs struct {
	// Dir is the specs folder, relative to the repository root.
	Dir string `toml:"dir"`
	// MaxAttempts is how many failed attempts (planner, implementer or
	// verifier) one spec may have in one run before it is given up.
	MaxAttempts int `toml:"max_attempts"`
	// Backoff is the wait before the first retry; it doubles with each
	// further failure. Zero retries at once.
	Backoff Duration `toml:"backoff"`
	// PlannerPromise ends the planner's final message when the plan is
	// written.
	PlannerPromise string `toml:"planner_promise"`
	// ImplementerPromise ends the implementer's final message when the
	// work is committed.
	ImplementerPromise string `toml:"implementer_promise"`
	// PassPromise and FailPromise end the verifier's final message.
	PassPromise string `toml:"pass_promise"`
	FailPromise string `toml:"fail_promise"`
	// Parallel is how many specs run at once, each in its own git
	// worktree; 1 (the default) runs them one after another in the
	// workspace itself.
	Parallel int `toml:"parallel"`
}

// DefaultSpecs returns the [specs] defaults.
func DefaultSpecs() Specs {
	return Specs{
		Dir:                "specs",
		MaxAttempts:        3,
		Backoff:            Duration{10 * time.Second},
		PlannerPromise:     DefaultPromise,
		ImplementerPromise: DefaultPromise,
		PassPromise:        DefaultPassPromise,
		FailPromise:        DefaultFailPromise,
		Parallel:           1,
	}
}

func (s Specs) validate() error {
	if err := CheckBounds(AtLeastOne("[specs] max_attempts", s.MaxAttempts), AtLeastOne("[specs] parallel", s.Parallel), Dur("[specs] backoff", s.Backoff.Duration)); err != nil {
		return fmt.Errorf("%s: %w", FileName, err)
	}
	for _, p := range []string{s.PlannerPromise, s.ImplementerPromise, s.PassPromise, s.FailPromise} {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("%s: [specs] promises must not be empty", FileName)
		}
	}
	if s.PassPromise == s.FailPromise {
		return fmt.Errorf("%s: [specs] pass_promise and fail_promise must differ", FileName)
	}
	return nil
}

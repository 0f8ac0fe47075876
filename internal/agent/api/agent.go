// Package api is ralph's own coding agent: a tool-using loop over the
// Anthropic Messages API or an OpenAI-compatible chat completions API,
// streamed through the official Go SDKs, with ralph's tools working in the
// workspace.
//
// One Run is one iteration. The system prompt is sent as the API's system
// prompt (Anthropic's system field, OpenAI's system message), the prompt as
// the first user message. Each model turn is streamed; its text is
// reported as a KindText event and its tool calls are run in order, each
// reported as a KindToolCall event (with its input) before it runs and a
// KindToolResult event after. A turn without tool calls ends the
// iteration and its text is Result.Final. Caps on turns and tool calls per
// iteration end it early with a KindError event saying so.
//
// The tools: read_file, write_file, edit_file, list_files, grep, run
// (an argv, never a shell string, in its own process group, with a
// timeout, and without the model's API keys in its environment) and
// plan_validate; and ralph's own commands, called as Go packages (never
// through a shell or the ralph binary): theme_modify and theme_list
// (internal/theme), recipe_show and recipe_list (internal/recipe), and
// snapshot_save, snapshot_list and snapshot_diff (internal/snapshot).
// There is no rollback tool: restoring a snapshot throws work away, and
// that is the human's call (`ralph snapshot rollback`), not the model's.
// Every path is confined to the workspace: absolute paths, ".." escapes
// and symlinks that lead out are refused. A tool that fails answers the
// model with an error result; it never ends the iteration.
//
// Rate limits (HTTP 429, honouring retry-after), overloads (529, 503) and
// server errors are retried with visible KindRateLimit or KindInfo events
// and exponential backoff; the SDKs' own retries are off. When the retries
// run out, or the provider asks for a longer wait than an iteration should
// sit through, Run returns a *agent.RateLimitError and the engine waits
// with its countdown. A prompt over the context window has its oldest tool
// results trimmed and is sent again. Request.IdleTimeout bounds the silence
// of a model stream (not of a tool run, which has its own timeout); a stream
// that goes quiet for longer ends the iteration with an error matching both
// agent.ErrIdle and proc.ErrIdle.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/agent"
	"github.com/ralph-harness/ralph/internal/theme"
)

// Providers.
const (
	// Anthropic is the Anthropic Messages API.
	Anthropic = "anthropic"
	// OpenAI is the OpenAI chat completions API, or any server that speaks it.
	OpenAI = "openai"
)

// Default models, used when Config.Model is empty.
const (
	DefaultAnthropicModel = "claude-sonnet-4-6"
	DefaultOpenAIModel    = "gpt-4.1"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxTurns     = 50
	DefaultMaxToolCalls = 200
	DefaultMaxTokens    = 8192
	DefaultMaxRetries   = 3
)

// Environment variables read for what Config leaves empty.
const (
	EnvAnthropicKey  = "ANTHROPIC_API_KEY"
	EnvAnthropicBase = "ANTHROPIC_BASE_URL"
	EnvOpenAIKey     = "OPENAI_API_KEY"
	EnvOpenAIBase    = "OPENAI_BASE_URL"
)

// Config configures the API agent. Zero values take the defaults named
// on each field.
type Config struct {
	// Provider is Anthropic or OpenAI. Empty means detected: from the key's
	// form when APIKey is set ("sk-ant-…" is Anthropic, anything else
	// OpenAI-compatible), else Anthropic when ANTHROPIC_API_KEY is set,
	// else OpenAI when OPENAI_API_KEY is set.
	Provider string
	// Model is the model id; empty means DefaultAnthropicModel or
	// DefaultOpenAIModel.
	Model string
	// BaseURL is the API's base URL; empty means ANTHROPIC_BASE_URL or
	// OPENAI_BASE_URL, else the provider's own. For OpenAI-compatible
	// servers it usually ends in /v1.
	BaseURL string
	// APIKey is the API key; empty means the variable APIKeyEnv names,
	// else ANTHROPIC_API_KEY or OPENAI_API_KEY.
	APIKey string
	// APIKeyEnv names an environment variable holding the key.
	APIKeyEnv string
	// MaxTurns caps the model turns in one iteration (DefaultMaxTurns).
	MaxTurns int
	// MaxToolCalls caps the tool calls in one iteration
	// (DefaultMaxToolCalls).
	MaxToolCalls int
	// MaxTokens caps the tokens of one model reply (DefaultMaxTokens).
	MaxTokens int
	// RunTimeout is the run tool's timeout when a call does not set one
	// (DefaultRunTimeout); no call runs longer than MaxRunTimeout.
	RunTimeout time.Duration
	// Stylesheet is where theme_modify writes, relative to the workspace
	// root, when the applied theme (.ralph/theme.json) records no
	// stylesheet of its own; empty means theme.DefaultStylesheet. As with
	// `ralph theme modify`, the recorded stylesheet wins. It must lie
	// inside the workspace.
	Stylesheet string
	// MaxRetries is how many retries after a rate limit, an overload or
	// a server error one iteration (or one Complete call) may spend
	// (DefaultMaxRetries); negative means none. When they run out, Run
	// returns a *agent.RateLimitError for limits and overloads, an error
	// otherwise.
	MaxRetries int
	// HTTPClient makes the requests; nil means the SDK's default.
	HTTPClient *http.Client
}

// resolve fills in the defaults, reading the environment through getenv.
func (c Config) resolve(getenv func(string) string) (Config, error) {
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	if c.APIKey == "" && c.APIKeyEnv != "" {
		if c.APIKey = getenv(c.APIKeyEnv); c.APIKey == "" {
			return c, fmt.Errorf("api agent: %s is not set", c.APIKeyEnv)
		}
	}
	switch c.Provider {
	case Anthropic, OpenAI:
	case "":
		switch {
		case c.APIKey != "" && strings.HasPrefix(c.APIKey, "sk-ant-"):
			c.Provider = Anthropic
		case c.APIKey != "":
			c.Provider = OpenAI
		case getenv(EnvAnthropicKey) != "":
			c.Provider = Anthropic
		case getenv(EnvOpenAIKey) != "":
			c.Provider = OpenAI
		default:
			return c, fmt.Errorf("api agent: no API key: set %s or %s (or configure a provider and key)", EnvAnthropicKey, EnvOpenAIKey)
		}
	default:
		return c, fmt.Errorf("api agent: unknown provider %q (want %q or %q)", c.Provider, Anthropic, OpenAI)
	}
	keyVar, baseVar, model := EnvAnthropicKey, EnvAnthropicBase, DefaultAnthropicModel
	if c.Provider == OpenAI {
		keyVar, baseVar, model = EnvOpenAIKey, EnvOpenAIBase, DefaultOpenAIModel
	}
	if c.APIKey == "" {
		if c.APIKey = getenv(keyVar); c.APIKey == "" {
			return c, fmt.Errorf("api agent: no API key for %s: set %s", c.Provider, keyVar)
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = getenv(baseVar)
	}
	if c.Model == "" {
		c.Model = model
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.MaxToolCalls <= 0 {
		c.MaxToolCalls = DefaultMaxToolCalls
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.RunTimeout <= 0 {
		c.RunTimeout = DefaultRunTimeout
	}
	c.RunTimeout = min(c.RunTimeout, MaxRunTimeout)
	if c.Stylesheet == "" {
		c.Stylesheet = theme.DefaultStylesheet
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	return c, nil
}

// provider sends one request and streams the reply. touch is called for
// every stream event. Errors are *apiError when the provider answered.
type provider interface {
	send(ctx context.Context, tr turnRequest, touch func()) (reply, error)
}

// client is what the agent and the one-shot model share.
type client struct {
	cfg   Config
	prov  provider
	retry retrier
	log   *slog.Logger
}

func newClient(cfg Config, logger *slog.Logger, component string) (*client, error) {
	cfg, err := cfg.resolve(os.Getenv)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &client{
		cfg:   cfg,
		retry: retrier{max: cfg.MaxRetries, base: 2 * time.Second, maxInline: MaxInlineWait, now: time.Now},
		log:   logger.With("component", component, "provider", cfg.Provider, "model", cfg.Model),
	}
	if cfg.Provider == Anthropic {
		c.prov = newAnthropic(cfg, time.Now)
	} else {
		c.prov = newOpenAI(cfg, time.Now)
	}
	return c, nil
}

// Agent is the API agent.
type Agent struct {
	c *client
}

var _ agent.Agent = (*Agent)(nil)

// New returns the API agent for cfg. It fails when no provider or key
// can be found.
func New(cfg Config, logger *slog.Logger) (*Agent, error) {
	c, err := newClient(cfg, logger, "agent/api")
	if err != nil {
		return nil, err
	}
	return &Agent{c: c}, nil
}

// Name returns "api".
func (a *Agent) Name() string { return "api" }

// Provider returns the provider in use, Anthropic or OpenAI.
func (a *Agent) Provider() string { return a.c.cfg.Provider }

// Model returns the model in use.
func (a *Agent) Model() string { return a.c.cfg.Model }

// Run performs one iteration in req.Dir.
func (a *Agent) Run(ctx context.Context, req agent.Request, emit func(agent.Event)) (agent.Result, error) {
	var res agent.Result
	ws, err := newWorkspace(req.Dir)
	if err != nil {
		return res, fmt.Errorf("api agent: %w", err)
	}
	cfg := a.c.cfg
	tools := &toolbox{ws: ws, runTimeout: cfg.RunTimeout, unset: secretVars(cfg, os.Environ()), stylesheet: cfg.Stylesheet, log: a.c.log, sandbox: req.Sandbox}
	tr := turnRequest{
		System:    req.System,
		Messages:  []message{{Role: roleUser, Text: req.Prompt}},
		Tools:     toolDefs,
		MaxTokens: int64(cfg.MaxTokens),
	}
	emit(agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("api agent: %s %s", cfg.Provider, cfg.Model)})
	retries := 0 // shared by the iteration's requests

	for turn := 1; ; turn++ {
		if turn > cfg.MaxTurns {
			emit(agent.Event{Kind: agent.KindError, Text: fmt.Sprintf("stopped after %d model turns, the per-iteration limit; the next iteration continues", cfg.MaxTurns)})
			return res, nil
		}
		rep, err := a.c.retry.send(ctx, a.c.prov, &tr, req.IdleTimeout, &retries, emit)
		if err != nil {
			return res, wrapErr(err)
		}
		res.Usage = res.Usage.Add(rep.Usage)
		u := rep.Usage
		emit(agent.Event{Kind: agent.KindUsage, Usage: &u})
		if rep.Text != "" {
			emit(agent.Event{Kind: agent.KindText, Text: rep.Text})
			res.Final = rep.Text
		}
		a.c.log.Debug("model turn", "turn", turn, "stop", rep.Stop, "tool_calls", len(rep.Calls), "input_tokens", u.InputTokens, "output_tokens", u.OutputTokens)
		tr.Messages = append(tr.Messages, message{Role: roleAssistant, Text: rep.Text, Calls: rep.Calls})
		if len(rep.Calls) == 0 {
			if rep.Stop == "max_tokens" || rep.Stop == "length" {
				emit(agent.Event{Kind: agent.KindInfo, Text: fmt.Sprintf("the model's reply was cut at the %d-token limit", cfg.MaxTokens)})
			}
			return res, nil
		}

		results := make([]toolResult, 0, len(rep.Calls))
		capped := false
		for _, call := range rep.Calls {
			if res.ToolCalls >= cfg.MaxToolCalls {
				capped = true
				results = append(results, toolResult{ID: call.ID, Name: call.Name, IsError: true,
					Content: fmt.Sprintf("not run: the limit of %d tool calls per iteration was reached", cfg.MaxToolCalls)})
				continue
			}
			input := toolArgs(call.Input)
			emit(agent.Event{Kind: agent.KindToolCall, Tool: call.Name, ToolID: call.ID, Input: input})
			res.ToolCalls++
			out, err := tools.call(ctx, call.Name, input)
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			r := toolResult{ID: call.ID, Name: call.Name, Content: out}
			if err != nil {
				r.Content, r.IsError = err.Error(), true
			}
			emit(agent.Event{Kind: agent.KindToolResult, Tool: call.Name, ToolID: call.ID, Text: r.Content, IsError: r.IsError})
			results = append(results, r)
		}
		tr.Messages = append(tr.Messages, message{Role: roleUser, Results: results})
		if capped {
			emit(agent.Event{Kind: agent.KindError, Text: fmt.Sprintf("stopped after %d tool calls, the per-iteration limit; the next iteration continues", cfg.MaxToolCalls)})
			return res, nil
		}
	}
}

// wrapErr wraps a model error once, leaving rate limits and
// cancellations as they are for the engine to branch on.
func wrapErr(err error) error {
	var rl *agent.RateLimitError
	if errors.As(err, &rl) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errIdle) {
		return err
	}
	return fmt.Errorf("api agent: %w", err)
}

package api

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"

	"github.com/ralph-harness/ralph/internal/agent"
)

// openaiProvider speaks the OpenAI chat completions API, streaming: the
// OpenAI API itself or any server compatible with it.
type openaiProvider struct {
	client openai.Client
	model  string
	// official is true for api.openai.com, which wants
	// max_completion_tokens; compatible servers get max_tokens.
	official bool
	now      func() time.Time
}

func newOpenAI(cfg Config, now func() time.Time) *openaiProvider {
	opts := []option.RequestOption{
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // ralph's retries are the visible ones
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	official := cfg.BaseURL == "" || strings.Contains(cfg.BaseURL, "api.openai.com")
	return &openaiProvider{client: openai.NewClient(opts...), model: cfg.Model, official: official, now: now}
}

func (p *openaiProvider) send(ctx context.Context, tr turnRequest, touch func()) (reply, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		Messages:      p.messages(tr.System, tr.Messages),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if tr.MaxTokens > 0 {
		if p.official {
			params.MaxCompletionTokens = openai.Int(tr.MaxTokens)
		} else {
			params.MaxTokens = openai.Int(tr.MaxTokens)
		}
	}
	for _, d := range tr.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionToolParam{Function: shared.FunctionDefinitionParam{
			Name:        d.Name,
			Description: openai.String(d.Description),
			Parameters:  shared.FunctionParameters(d.schema()),
		}})
	}

	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var (
		text   strings.Builder
		calls  []*toolCall
		byIdx  = map[int64]*toolCall{}
		finish string
		usage  openai.CompletionUsage
	)
	for stream.Next() {
		touch()
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens+chunk.Usage.PromptTokens > 0 {
			usage = chunk.Usage
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			text.WriteString(c.Delta.Content)
			for _, d := range c.Delta.ToolCalls {
				tc := byIdx[d.Index]
				// A new id at a used index is a new call: some compatible
				// servers send every call at index 0.
				if tc == nil || d.ID != "" && tc.ID != "" && d.ID != tc.ID {
					tc = &toolCall{}
					byIdx[d.Index] = tc
					calls = append(calls, tc)
				}
				if d.ID != "" {
					tc.ID = d.ID
				}
				tc.Name += d.Function.Name
				tc.Input = append(tc.Input, d.Function.Arguments...)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return reply{}, p.classify(err)
	}

	r := reply{Text: text.String(), Stop: finish}
	for _, c := range calls {
		r.Calls = append(r.Calls, *c)
	}
	cached := usage.PromptTokensDetails.CachedTokens
	r.Usage = agent.Usage{
		InputTokens:     usage.PromptTokens - cached,
		OutputTokens:    usage.CompletionTokens,
		CacheReadTokens: cached,
	}
	r.Usage.CostUSD = cost(p.model, r.Usage)
	return r, nil
}

// messages translates the conversation into chat messages, the system
// prompt first as a system message.
func (p *openaiProvider) messages(system string, msgs []message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range msgs {
		for _, r := range m.Results {
			content := r.Content
			if r.IsError {
				content = "Error: " + content
			}
			out = append(out, openai.ToolMessage(content, r.ID))
		}
		switch {
		case m.Role == roleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.Calls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageToolCallFunctionParam{Name: c.Name, Arguments: string(validInput(c.Input))},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case m.Text != "":
			out = append(out, openai.UserMessage(m.Text))
		}
	}
	return out
}

func (p *openaiProvider) classify(err error) error {
	var e *openai.Error
	if !errors.As(err, &e) {
		return &apiError{Kind: kindOf(0, err.Error()), Err: err}
	}
	text := e.Code + " " + e.Type + " " + e.Message + " " + e.RawJSON()
	ae := &apiError{Kind: kindOf(e.StatusCode, text), Status: e.StatusCode, Err: err}
	if e.Response != nil {
		ae.RetryAfter = retryAfterFrom(e.Response.Header, p.now())
	}
	return ae
}

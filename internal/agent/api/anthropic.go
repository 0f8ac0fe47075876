package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/ralph-harness/ralph/internal/agent"
)

// anthropicProvider speaks the Anthropic Messages API, streaming.
type anthropicProvider struct {
	client anthropic.Client
	model  string
	now    func() time.Time
}

func newAnthropic(cfg Config, now func() time.Time) *anthropicProvider {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(), // ralph resolved the key and URL itself
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // ralph's retries are the visible ones
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...), model: cfg.Model, now: now}
}

func (p *anthropicProvider) send(ctx context.Context, tr turnRequest, touch func()) (reply, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: tr.MaxTokens,
		Messages:  p.messages(tr.Messages),
	}
	if tr.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: tr.System}}
	}
	for _, d := range tr.Tools {
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        d.Name,
			Description: anthropic.String(d.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: d.Properties, Required: d.Required},
		}})
	}

	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		touch()
		if err := msg.Accumulate(stream.Current()); err != nil {
			return reply{}, &apiError{Kind: errServer, Err: err}
		}
	}
	if err := stream.Err(); err != nil {
		return reply{}, p.classify(err)
	}

	var r reply
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			r.Text += b.Text
		case "tool_use":
			r.Calls = append(r.Calls, toolCall{ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	r.Stop = string(msg.StopReason)
	r.Usage = agent.Usage{
		InputTokens:      msg.Usage.InputTokens,
		OutputTokens:     msg.Usage.OutputTokens,
		CacheReadTokens:  msg.Usage.CacheReadInputTokens,
		CacheWriteTokens: msg.Usage.CacheCreationInputTokens,
	}
	r.Usage.CostUSD = cost(p.model, r.Usage)
	return r, nil
}

// messages translates the conversation into Messages API messages.
func (p *anthropicProvider) messages(msgs []message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, m := range msgs {
		var blocks []anthropic.ContentBlockParamUnion
		for _, r := range m.Results {
			content := r.Content
			if content == "" {
				content = "(no output)" // the API refuses empty text
			}
			blocks = append(blocks, anthropic.NewToolResultBlock(r.ID, content, r.IsError))
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, c := range m.Calls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, validInput(c.Input), c.Name))
		}
		if len(blocks) == 0 {
			blocks = append(blocks, anthropic.NewTextBlock("(empty)"))
		}
		if m.Role == roleAssistant {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return out
}

func (p *anthropicProvider) classify(err error) error {
	var e *anthropic.Error
	if !errors.As(err, &e) {
		return &apiError{Kind: kindOf(0, err.Error()), Err: err}
	}
	status := e.StatusCode
	switch e.Type() {
	case anthropic.ErrorTypeOverloadedError:
		status = 529 // also in a stream that began with 200
	case anthropic.ErrorTypeRateLimitError:
		status = http.StatusTooManyRequests
	case anthropic.ErrorTypeAPIError:
		if status < 400 { // an error event in a stream that began with 200
			status = http.StatusInternalServerError
		}
	}
	ae := &apiError{Kind: kindOf(status, e.Error()), Status: status, Err: err}
	if status == e.StatusCode && e.Response != nil {
		ae.RetryAfter = retryAfterFrom(e.Response.Header, p.now())
	}
	return ae
}

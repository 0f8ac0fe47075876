package testutil

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"
)

func chatClient(s *ChatServer) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.BaseURL()), option.WithAPIKey("sk-fake"), option.WithMaxRetries(0))
}

func chatParams(tools bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         "gpt-fake",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hello")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if tools {
		p.Tools = []openai.ChatCompletionToolParam{{Function: shared.FunctionDefinitionParam{
			Name: "write_file",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{
				"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}},
		}}}
	}
	return p
}

// The official SDK reads the fake's stream: text deltas, a tool call in
// pieces, the finish reason and the usage chunk.
func TestChatStreamSDK(t *testing.T) {
	s := NewChat(t, Calls("Writing it.", WriteFile("a.txt", "hi")), Text("done"))
	c := chatClient(s)
	stream := c.Chat.Completions.NewStreaming(context.Background(), chatParams(true))
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	ch := acc.Choices[0]
	if ch.Message.Content != "Writing it." || ch.FinishReason != "tool_calls" {
		t.Errorf("content %q finish %q", ch.Message.Content, ch.FinishReason)
	}
	if len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "write_file" {
		t.Fatalf("tool calls = %+v", ch.Message.ToolCalls)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(ch.Message.ToolCalls[0].Function.Arguments), &in); err != nil || in["path"] != "a.txt" || in["content"] != "hi" {
		t.Errorf("arguments %q: %v", ch.Message.ToolCalls[0].Function.Arguments, err)
	}
	if acc.Usage.PromptTokens != 100 || acc.Usage.CompletionTokens != 20 {
		t.Errorf("usage = %+v", acc.Usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].System != "be brief" || reqs[0].UserText != "hello" || !reqs[0].Stream || !reqs[0].Scripted {
		t.Errorf("recorded %+v", reqs)
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "write_file" {
		t.Errorf("tools = %+v", reqs[0].Tools)
	}
	if s.Remaining() != 1 {
		t.Errorf("remaining = %d", s.Remaining())
	}

	// Non-streaming, and a tool-less request: canned unless AnswerAll.
	got, err := c.Chat.Completions.New(context.Background(), chatParams(false))
	if err != nil || got.Choices[0].Message.Content != "ok" {
		t.Fatalf("tool-less = %+v, %v", got, err)
	}
	s.AnswerAll = true
	got, err = c.Chat.Completions.New(context.Background(), chatParams(false))
	if err != nil || got.Choices[0].Message.Content != "done" || got.Choices[0].FinishReason != "stop" {
		t.Fatalf("answer-all = %+v, %v", got, err)
	}
}

func TestChatErrors(t *testing.T) {
	s := NewChat(t,
		Turn{Status: 429, RetryAfter: "7", Message: "Rate limit reached"},
		ContextExceeded(),
		Turn{Failed: true, Message: "boom"},
	)
	c := chatClient(s)
	ctx := context.Background()

	_, err := c.Chat.Completions.New(ctx, chatParams(true))
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != 429 || e.Response.Header.Get("retry-after") != "7" || e.Code != "rate_limit_exceeded" {
		t.Fatalf("429: %v", err)
	}
	_, err = c.Chat.Completions.New(ctx, chatParams(true))
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != "context_length_exceeded" {
		t.Fatalf("context: %v", err)
	}
	stream := c.Chat.Completions.NewStreaming(ctx, chatParams(true))
	for stream.Next() {
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("failed stream: %v", err)
	}
}

func TestChatNotFound(t *testing.T) {
	s := NewChat(t)
	c := chatClient(s)
	if _, err := c.Models.List(context.Background()); err != nil {
		t.Fatalf("models: %v", err)
	}
	_, err := c.Completions.New(context.Background(), openai.CompletionNewParams{Model: "x", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}})
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != 404 {
		t.Fatalf("legacy completions: %v", err)
	}
}

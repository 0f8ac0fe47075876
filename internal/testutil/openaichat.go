package testutil

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ChatServer is a fake OpenAI chat completions API, the wire format
// OpenAI-compatible servers share: POST /v1/chat/completions (streaming
// and not), GET /v1/models, 404 elsewhere.
//
// Streams are sent as the API sends them: a first chunk with the
// assistant role, text content in several deltas, each tool call as a
// delta with its index, id and name followed by its arguments in pieces,
// a last chunk with the finish_reason, a usage chunk with no choices when
// stream_options.include_usage asks for one, and data: [DONE].
//
// An error turn answers with the API's error body and, for Status 429,
// its retry-after header; ContextExceeded is the 400 a prompt over the
// context window gets. A Failed turn sends an error object in the middle
// of the stream.
type ChatServer struct {
	server
	// AnswerAll makes requests without tools take turns of the script too
	// (one-shot completions); by default they get a canned "ok".
	AnswerAll bool
}

// NewChat starts a fake OpenAI chat completions API on 127.0.0.1 that
// answers with turns; it stops when the test ends.
func NewChat(t testing.TB, turns ...Turn) *ChatServer {
	s := &ChatServer{server: server{t: t}}
	s.start(turns, s.handle)
	return s
}

// BaseURL is the URL OpenAI clients take as their base URL (…/v1).
func (s *ChatServer) BaseURL() string { return s.URL() + "/v1" }

// ContextExceeded returns a turn answering HTTP 400 with OpenAI's
// context_length_exceeded error.
func ContextExceeded() Turn {
	return Turn{Status: http.StatusBadRequest, Code: "context_length_exceeded",
		Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."}
}

type chatBody struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func (s *ChatServer) handle(w http.ResponseWriter, r *http.Request) {
	req := readRequest(r)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "gpt-fake", "object": "model", "created": 0, "owned_by": "ralph"}}})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
	default:
		s.record(req)
		writeJSON(w, http.StatusNotFound, chatError(http.StatusNotFound, "", "not found: "+r.URL.Path))
		return
	}
	var body chatBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		s.record(req)
		writeJSON(w, http.StatusBadRequest, chatError(http.StatusBadRequest, "", err.Error()))
		return
	}
	req.Model, req.Stream = body.Model, body.Stream
	var system, user []string
	for _, m := range body.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, textOf(m.Content))
		case "user":
			user = append(user, textOf(m.Content))
		}
	}
	req.System = strings.Join(system, "\n\n")
	req.UserText = strings.Join(user, "\n")
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Schema: t.Function.Parameters})
	}

	turn := s.take(&req, len(req.Tools) > 0 || s.AnswerAll)

	if turn.Status != 0 {
		if turn.RetryAfter != "" {
			w.Header().Set("retry-after", turn.RetryAfter)
		}
		writeJSON(w, turn.Status, chatError(turn.Status, turn.Code, turn.Message))
		return
	}

	id := s.nextID("chatcmpl")
	created := time.Now().Unix()
	calls := s.toolCalls(turn, req.Tools)
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	in, out := orDefault(turn.InputTokens, 100), orDefault(turn.OutputTokens, 20)
	usage := map[string]any{
		"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
	if !body.Stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if turn.Text != "" {
			msg["content"] = turn.Text
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   usage,
		})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	data := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	data(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if turn.Failed {
		code := turn.Code
		if code == "" {
			code = "server_error"
		}
		msg := turn.Message
		if msg == "" {
			msg = "The server had an error while processing your request."
		}
		data(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": code}})
		return
	}
	// Text in two deltas, to exercise the client's joining.
	if t := turn.Text; t != "" {
		half := len(t) / 2
		for _, part := range []string{t[:half], t[half:]} {
			if part != "" {
				data(chunk(map[string]any{"content": part}, nil))
			}
		}
	}
	for i, c := range calls {
		fn := c["function"].(map[string]any)
		data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil))
		args := fn["arguments"].(string)
		half := len(args) / 2
		for _, part := range []string{args[:half], args[half:]} {
			data(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	data(chunk(map[string]any{}, finish))
	if body.StreamOptions.IncludeUsage {
		data(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": body.Model,
			"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// toolCalls maps the turn's calls onto the offered tools, in the chat
// completions form.
func (s *ChatServer) toolCalls(turn Turn, tools []Tool) []map[string]any {
	var out []map[string]any
	for _, c := range turn.Calls {
		use, err := MapCall(c, tools)
		if err != nil {
			s.t.Errorf("fake chat completions: %v", err)
			continue
		}
		out = append(out, map[string]any{"id": s.nextID("call"), "type": "function",
			"function": map[string]any{"name": use.Name, "arguments": string(use.Input)}})
	}
	return out
}

// chatError is the API's error body for status.
func chatError(status int, code, msg string) map[string]any {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "requests"
		if code == "" {
			code = "rate_limit_exceeded"
		}
	case status == http.StatusUnauthorized:
		if code == "" {
			code = "invalid_api_key"
		}
	case status >= 500:
		typ = "server_error"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
}

// OpencodeConfig returns an opencode configuration (the JSON of
// opencode.json or OPENCODE_CONFIG_CONTENT) that makes the server
// opencode's model: a provider "fake" through @ai-sdk/openai-compatible
// with the model fake-coder, selected as the default model, with sharing
// and updates off. (For a model named gpt-… opencode offers apply_patch
// instead of its write tool.)
func (s *ChatServer) OpencodeConfig() string {
	b, _ := json.Marshal(map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake",
			"options": map[string]any{"baseURL": s.BaseURL(), "apiKey": "sk-fake-key"},
			"models":  map[string]any{"fake-coder": map[string]any{"name": "Fake Coder", "tool_call": true}},
		}},
		"model":      "fake/fake-coder",
		"autoupdate": false,
		"share":      "disabled",
	})
	return string(b)
}

// OpencodeEnv returns the environment that runs opencode from a new
// temporary HOME (its config, data, cache and state directories inside
// it) with its outside traffic off: no model list fetch, no updates, no
// LSP downloads, no default plugins.
func OpencodeEnv(t testing.TB) []string {
	home := t.TempDir()
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home + "/.config",
		"XDG_DATA_HOME=" + home + "/.local/share",
		"XDG_CACHE_HOME=" + home + "/.cache",
		"XDG_STATE_HOME=" + home + "/.local/state",
		"OPENCODE_DISABLE_MODELS_FETCH=true",
		"OPENCODE_DISABLE_AUTOUPDATE=true",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=true",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=true",
		"OPENCODE_DISABLE_SHARE=true",
	}
}

// QwenEnv returns the environment and arguments that run Qwen Code
// against the server from a new temporary HOME: OpenAI auth with the
// server as its base URL and model fake-coder, telemetry and update
// checks off, and no retries of a rate-limited request (Qwen Code
// otherwise waits a minute and more between ten retries).
func (s *ChatServer) QwenEnv(t testing.TB) (env, args []string) {
	home := t.TempDir()
	dir := filepath.Join(home, ".qwen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"security":{"auth":{"selectedType":"openai"}},"telemetry":{"enabled":false},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false,"disableAutoUpdate":true},"model":{"generationConfig":{"maxRetries":0}}}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env = []string{"HOME=" + home, "OPENAI_API_KEY=sk-fake-key", "OPENAI_BASE_URL=" + s.BaseURL(), "OPENAI_MODEL=fake-coder"}
	args = []string{"--auth-type", "openai", "--openai-base-url", s.BaseURL()}
	return env, args
}

// CopilotEnv returns the environment that runs GitHub Copilot CLI against
// the server as a bring-your-own-key provider (chat completions, model
// fake-coder) from a new temporary HOME and COPILOT_HOME, offline: no
// GitHub login, telemetry or update.
func (s *ChatServer) CopilotEnv(t testing.TB) []string {
	home := t.TempDir()
	return []string{
		"HOME=" + home,
		"COPILOT_HOME=" + filepath.Join(home, ".copilot"),
		"COPILOT_PROVIDER_BASE_URL=" + s.BaseURL(),
		"COPILOT_PROVIDER_API_KEY=sk-fake-key",
		"COPILOT_MODEL=fake-coder",
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
	}
}

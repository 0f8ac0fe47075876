package testutil

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// AnthropicServer is a fake Anthropic Messages API: POST /v1/messages
// (streaming and not), POST /v1/messages/count_tokens, 404 elsewhere.
type AnthropicServer struct {
	server
	// ToolLess, when set, may answer a request that offers no tools (which
	// otherwise gets a plain "ok", as side requests do): it returns the
	// turn and true for the requests it recognises, such as ralph's task
	// parse. Such a request is logged as Scripted. Set it before the
	// first request.
	ToolLess func(Request) (Turn, bool)
}

// NewAnthropic starts a fake Anthropic API on 127.0.0.1 that answers with
// turns; it stops when the test ends.
func NewAnthropic(t testing.TB, turns ...Turn) *AnthropicServer {
	s := &AnthropicServer{server: server{t: t}}
	s.start(turns, s.handle)
	return s
}

// Env returns the environment that points Claude Code at the server, with
// its telemetry and other outside traffic off.
func (s *AnthropicServer) Env() []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + s.URL(),
		"ANTHROPIC_API_KEY=sk-ant-fake-key",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
}

type anthropicBody struct {
	Model    string `json:"model"`
	System   any    `json:"system"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Type        string         `json:"type"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
}

func (s *AnthropicServer) handle(w http.ResponseWriter, r *http.Request) {
	req := readRequest(r)
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
	default:
		s.record(req)
		writeJSON(w, http.StatusNotFound, anthropicError("not_found_error", "not found: "+r.URL.Path))
		return
	}
	var body anthropicBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		s.record(req)
		writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", err.Error()))
		return
	}
	req.Model, req.Stream = body.Model, body.Stream
	req.System = textOf(body.System)
	var user []string
	for _, m := range body.Messages {
		if m.Role == "user" {
			if t := textOf(m.Content); t != "" {
				user = append(user, t)
			}
		}
	}
	req.UserText = strings.Join(user, "\n")
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Name, Schema: t.InputSchema})
	}

	var turn Turn
	answered := false
	if len(req.Tools) == 0 && s.ToolLess != nil {
		if turn, answered = s.ToolLess(req); answered {
			req.Scripted = true
			s.record(req)
		}
	}
	if !answered {
		turn = s.take(&req, len(req.Tools) > 0)
	}

	if turn.Status != 0 {
		if turn.RetryAfter != "" {
			w.Header().Set("retry-after", turn.RetryAfter)
		}
		typ := "api_error"
		switch turn.Status {
		case 429:
			typ = "rate_limit_error"
		case 529:
			typ = "overloaded_error"
		case 401:
			typ = "authentication_error"
		}
		msg := turn.Message
		if msg == "" {
			msg = http.StatusText(turn.Status)
		}
		writeJSON(w, turn.Status, anthropicError(typ, msg))
		return
	}

	blocks, stop := s.blocks(turn, req.Tools)
	usage := map[string]any{
		"input_tokens":                orDefault(turn.InputTokens, 100),
		"output_tokens":               orDefault(turn.OutputTokens, 20),
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}
	msg := map[string]any{
		"id": s.nextID("msg"), "type": "message", "role": "assistant", "model": body.Model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
	}
	if !body.Stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	e := newSSE(w)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	e.send("message_start", map[string]any{"type": "message_start", "message": start})
	if turn.Failed {
		m := turn.Message
		if m == "" {
			m = "Overloaded"
		}
		e.send("error", anthropicError("overloaded_error", m))
		return
	}
	e.send("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		if b["type"] == "text" {
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			// Split the input like the API does, to exercise the client's joining.
			half := len(in) / 2
			for _, part := range []string{string(in[:half]), string(in[half:])} {
				e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

func (s *AnthropicServer) blocks(turn Turn, tools []Tool) ([]map[string]any, string) {
	var blocks []map[string]any
	if turn.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": turn.Text})
	}
	stop := "end_turn"
	for _, c := range turn.Calls {
		use, err := MapCall(c, tools)
		if err != nil {
			s.t.Errorf("fake anthropic: %v", err)
			continue
		}
		var in any
		_ = json.Unmarshal(use.Input, &in)
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": s.nextID("toolu"), "name": use.Name, "input": in})
		stop = "tool_use"
	}
	if len(blocks) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": "done"})
	}
	return blocks, stop
}

func anthropicError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

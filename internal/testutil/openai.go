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

// ResponsesServer is a fake OpenAI Responses API: POST /v1/responses
// (streaming and not), GET /v1/models, 404 elsewhere.
type ResponsesServer struct {
	server
}

// NewResponses starts a fake OpenAI Responses API on 127.0.0.1 that
// answers with turns; it stops when the test ends.
func NewResponses(t testing.TB, turns ...Turn) *ResponsesServer {
	s := &ResponsesServer{server{t: t}}
	s.start(turns, s.handle)
	return s
}

// FakeOpenAIKeyVar is the variable CodexHome's provider reads its key from.
const FakeOpenAIKeyVar = "RALPH_FAKE_OPENAI_KEY"

// CodexHome writes a Codex configuration into a new temporary CODEX_HOME
// that makes the server the model provider (wire_api "responses", no
// retries) and returns the environment for running codex against it. The
// model is gpt-5.5, one Codex knows, so that it offers its apply_patch tool.
func (s *ResponsesServer) CodexHome(t testing.TB) []string {
	home := t.TempDir()
	config := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
env_key = "%s"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000

[analytics]
enabled = false

[otel]
exporter = "none"
`, s.URL(), FakeOpenAIKeyVar)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"CODEX_HOME=" + home, FakeOpenAIKeyVar + "=sk-fake-key"}
}

type responsesBody struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions"`
	Stream       bool              `json:"stream"`
	Input        []json.RawMessage `json:"input"`
	Tools        []struct {
		Type       string         `json:"type"`
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"tools"`
}

func (s *ResponsesServer) handle(w http.ResponseWriter, r *http.Request) {
	req := readRequest(r)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
	default:
		s.record(req)
		writeJSON(w, http.StatusNotFound, openaiError("not_found", "not found: "+r.URL.Path))
		return
	}
	var body responsesBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		s.record(req)
		writeJSON(w, http.StatusBadRequest, openaiError("invalid_request_error", err.Error()))
		return
	}
	req.Model, req.Stream = body.Model, body.Stream
	system := []string{}
	if body.Instructions != "" {
		system = append(system, body.Instructions)
	}
	var user []string
	for _, raw := range body.Input {
		var item struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if json.Unmarshal(raw, &item) != nil || (item.Type != "" && item.Type != "message") {
			continue
		}
		switch item.Role {
		case "system", "developer":
			system = append(system, textOf(item.Content))
		case "user":
			user = append(user, textOf(item.Content))
		}
	}
	req.System = strings.Join(system, "\n\n")
	req.UserText = strings.Join(user, "\n")
	for _, t := range body.Tools {
		name := t.Name
		if name == "" {
			name = t.Type
		}
		req.Tools = append(req.Tools, Tool{Name: name, Custom: t.Type == "custom", Schema: t.Parameters})
	}

	turn := s.take(&req, len(req.Tools) > 0)

	if turn.Status != 0 {
		if turn.RetryAfter != "" {
			w.Header().Set("retry-after", turn.RetryAfter)
		}
		code := "server_error"
		if turn.Status == 429 {
			code = "rate_limit_exceeded"
		}
		msg := turn.Message
		if msg == "" {
			msg = http.StatusText(turn.Status)
		}
		writeJSON(w, turn.Status, openaiError(code, msg))
		return
	}

	id := s.nextID("resp")
	items := s.items(turn, req.Tools)
	usage := map[string]any{
		"input_tokens":          orDefault(turn.InputTokens, 100),
		"input_tokens_details":  map[string]any{"cached_tokens": 0},
		"output_tokens":         orDefault(turn.OutputTokens, 20),
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          orDefault(turn.InputTokens, 100) + orDefault(turn.OutputTokens, 20),
	}
	resp := func(status string, output []map[string]any) map[string]any {
		m := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": body.Model, "output": output}
		if status == "completed" {
			m["usage"] = usage
		}
		return m
	}
	if !body.Stream {
		writeJSON(w, http.StatusOK, resp("completed", items))
		return
	}
	e := newSSE(w)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.send(typ, fields)
	}
	send("response.created", map[string]any{"response": resp("in_progress", []map[string]any{})})
	send("response.in_progress", map[string]any{"response": resp("in_progress", []map[string]any{})})
	if turn.Failed {
		code := turn.Code
		if code == "" {
			code = "server_error"
		}
		msg := turn.Message
		if msg == "" {
			msg = "The model failed to produce a response."
		}
		failed := resp("failed", []map[string]any{})
		failed["error"] = map[string]any{"code": code, "message": msg}
		send("response.failed", map[string]any{"response": failed})
		return
	}
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch it["type"] {
		case "message":
			text := it["content"].([]map[string]any)[0]["text"].(string)
			added["content"] = []any{}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			send("response.content_part.added", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			send("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "delta": text})
			send("response.output_text.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "text": text})
			send("response.content_part.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		case "function_call":
			added["arguments"] = ""
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			send("response.function_call_arguments.delta", map[string]any{"item_id": it["id"], "output_index": i, "delta": it["arguments"]})
			send("response.function_call_arguments.done", map[string]any{"item_id": it["id"], "output_index": i, "arguments": it["arguments"]})
		default:
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	send("response.completed", map[string]any{"response": resp("completed", items)})
}

func (s *ResponsesServer) items(turn Turn, tools []Tool) []map[string]any {
	var items []map[string]any
	if turn.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": s.nextID("msg"), "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": turn.Text, "annotations": []any{}}}})
	}
	for _, c := range turn.Calls {
		use, err := MapCall(c, tools)
		if err != nil {
			s.t.Errorf("fake openai: %v", err)
			continue
		}
		callID := s.nextID("call")
		if use.Custom {
			items = append(items, map[string]any{"type": "custom_tool_call", "id": s.nextID("ctc"), "call_id": callID,
				"name": use.Name, "input": use.Text, "status": "completed"})
			continue
		}
		items = append(items, map[string]any{"type": "function_call", "id": s.nextID("fc"), "call_id": callID,
			"name": use.Name, "arguments": string(use.Input), "status": "completed"})
	}
	if len(items) == 0 {
		items = append(items, map[string]any{"type": "message", "id": s.nextID("msg"), "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": "done", "annotations": []any{}}}})
	}
	return items
}

func openaiError(code, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"type": code, "code": code, "message": msg}}
}

package testutil

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestMapCall(t *testing.T) {
	claudeTools := []Tool{
		{Name: "Write", Schema: map[string]any{"properties": map[string]any{"file_path": map[string]any{}, "content": map[string]any{}}}},
		{Name: "Bash", Schema: map[string]any{"properties": map[string]any{"command": map[string]any{"type": "string"}}}},
	}
	codexTools := []Tool{
		{Name: "exec_command", Schema: map[string]any{"properties": map[string]any{"cmd": map[string]any{"type": "string"}}}},
		{Name: "apply_patch", Custom: true},
	}
	oldCodex := []Tool{{Name: "shell", Schema: map[string]any{"properties": map[string]any{"command": map[string]any{"type": "array"}}}}}
	tests := []struct {
		call  Call
		tools []Tool
		name  string
		input string
		text  string
	}{
		{WriteFile("/w/a.txt", "hi\n"), claudeTools, "Write", `{"content":"hi\n","file_path":"/w/a.txt"}`, ""},
		{Shell("ls", "-la", "a b"), claudeTools, "Bash", `{"command":"ls -la 'a b'","description":"Run a command"}`, ""},
		{Shell("ls"), codexTools, "exec_command", `{"cmd":"ls"}`, ""},
		{WriteFile("a.txt", "x\ny\n"), codexTools, "apply_patch", "", "*** Begin Patch\n*** Add File: a.txt\n+x\n+y\n*** End Patch\n"},
		{Shell("ls", "it's"), oldCodex, "shell", `{"command":["ls","it's"]}`, ""},
		{WriteFile("a.txt", "x"), oldCodex, "shell", `{"command":["sh","-c","printf '%s' \"$1\" \u003e \"$0\"","a.txt","x"]}`, ""},
		{RawCall("Glob", map[string]any{"pattern": "*"}), nil, "Glob", `{"pattern":"*"}`, ""},
	}
	for _, tt := range tests {
		use, err := MapCall(tt.call, tt.tools)
		if err != nil {
			t.Errorf("MapCall(%+v): %v", tt.call, err)
			continue
		}
		if use.Name != tt.name || string(use.Input) != tt.input || use.Text != tt.text {
			t.Errorf("MapCall(%+v) = %s %s %q; want %s %s %q", tt.call, use.Name, use.Input, use.Text, tt.name, tt.input, tt.text)
		}
	}
	if _, err := MapCall(Shell("ls"), nil); err == nil {
		t.Error("MapCall with no shell tool succeeded")
	}
}

func post(t *testing.T, url string, body any) (*http.Response, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// The fake Anthropic API answers scripted turns to requests with tools,
// canned text to the rest, errors with their status and retry-after, and
// records what it received.
func TestAnthropicServer(t *testing.T) {
	s := NewAnthropic(t, Calls("hi", WriteFile("/a", "b")), Turn{Status: 529, RetryAfter: "5"})
	tools := []map[string]any{{"name": "Write", "input_schema": map[string]any{"properties": map[string]any{"file_path": map[string]any{}}}}}
	_, body := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "system": "SYS",
		"messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	if !strings.Contains(body, `"text":"ok"`) {
		t.Errorf("housekeeping answer = %s", body)
	}
	_, body = post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": tools,
		"system":   []any{map[string]any{"type": "text", "text": "SYS"}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}}}})
	for _, want := range []string{"event: message_start", `"type":"tool_use"`, `"name":"Write"`, "input_json_delta", `"stop_reason":"tool_use"`, "event: message_stop"} {
		if !strings.Contains(body, want) {
			t.Errorf("stream lacks %s:\n%s", want, body)
		}
	}
	resp, body := post(t, s.URL()+"/v1/messages", map[string]any{"model": "m", "tools": tools, "messages": []any{}})
	if resp.StatusCode != 529 || resp.Header.Get("retry-after") != "5" || !strings.Contains(body, "overloaded_error") {
		t.Errorf("error answer = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, _ = post(t, s.URL()+"/v1/messages/count_tokens", map[string]any{})
	if resp.StatusCode != 200 {
		t.Errorf("count_tokens = %d", resp.StatusCode)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].Scripted || !reqs[1].Scripted || reqs[1].System != "SYS" || reqs[1].UserText != "go" {
		t.Errorf("requests = %+v", reqs)
	}
	if s.Remaining() != 0 {
		t.Errorf("Remaining = %d", s.Remaining())
	}
}

func TestResponsesServer(t *testing.T) {
	s := NewResponses(t, Calls("", Shell("ls")), Turn{Failed: true, Message: "nope"}, Text("done"))
	tools := []map[string]any{{"type": "function", "name": "exec_command", "parameters": map[string]any{"properties": map[string]any{"cmd": map[string]any{}}}}}
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "DEV"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "USER"}}},
	}
	_, body := post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "stream": true, "tools": tools, "instructions": "BASE", "input": input})
	for _, want := range []string{"event: response.created", `"type":"function_call"`, `"name":"exec_command"`, `\"cmd\":\"ls\"`, "event: response.completed", `"total_tokens":120`} {
		if !strings.Contains(body, want) {
			t.Errorf("stream lacks %s:\n%s", want, body)
		}
	}
	_, body = post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "stream": true, "tools": tools, "input": input})
	if !strings.Contains(body, "event: response.failed") || !strings.Contains(body, "nope") {
		t.Errorf("failed turn = %s", body)
	}
	_, body = post(t, s.URL()+"/v1/responses", map[string]any{"model": "m", "tools": tools, "input": input})
	if !strings.Contains(body, `"output_text"`) || !strings.Contains(body, "done") || !strings.Contains(body, `"status":"completed"`) {
		t.Errorf("non-streaming answer = %s", body)
	}
	reqs := s.Scripted()
	if len(reqs) != 3 || reqs[0].System != "BASE\n\nDEV" || reqs[0].UserText != "USER" {
		t.Errorf("requests = %+v", reqs)
	}
	if env := s.CodexHome(t); len(env) != 2 || !strings.HasPrefix(env[0], "CODEX_HOME=") {
		t.Errorf("CodexHome = %v", env)
	}
}

func TestShellQuote(t *testing.T) {
	if got := ShellQuote([]string{"echo", "a b", "it's", "", "x=1"}); got != `echo 'a b' 'it'\''s' '' x=1` {
		t.Errorf("ShellQuote = %s", got)
	}
}

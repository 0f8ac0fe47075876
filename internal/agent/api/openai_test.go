package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Some OpenAI-compatible servers send every tool call at index 0, each
// whole in one chunk; the calls must stay apart.
func TestOpenAICallsAtOneIndex(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"list_files","arguments":"{}"}}]}}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	p := newOpenAI(Config{BaseURL: srv.URL, APIKey: "k", Model: "m"}, nil)
	rep, err := p.send(context.Background(), turnRequest{Messages: []message{{Role: roleUser, Text: "hi"}}, Tools: toolDefs}, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != 2 || rep.Calls[0].Name != "list_files" || rep.Calls[1].Name != "read_file" ||
		rep.Calls[1].ID != "call_b" || string(rep.Calls[1].Input) != `{"path":"a"}` || rep.Stop != "tool_calls" {
		t.Errorf("calls = %+v", rep.Calls)
	}
}

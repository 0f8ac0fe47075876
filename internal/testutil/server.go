package testutil

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is one request a fake server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Model is the requested model.
	Model string
	// System is the system prompt: Anthropic's system blocks, or OpenAI's
	// instructions followed by the text of system and developer messages.
	System string
	// UserText is the text of every user message, in order.
	UserText string
	// Tools are the tools the request offered.
	Tools []Tool
	// Stream says the client asked for server-sent events.
	Stream bool
	// Scripted says the request took a turn of the script.
	Scripted bool
}

// server is what both fakes share: the script and the request log.
type server struct {
	t      testing.TB
	srv    *httptest.Server
	script script
	mu     sync.Mutex
	reqs   []Request
	ids    int
}

// URL is the server's base URL (http://127.0.0.1:PORT).
func (s *server) URL() string { return s.srv.URL }

// Requests returns every request received so far.
func (s *server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Scripted returns the requests that took a turn of the script.
func (s *server) Scripted() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Scripted {
			out = append(out, r)
		}
	}
	return out
}

// Push appends turns to the script.
func (s *server) Push(turns ...Turn) { s.script.push(turns) }

// Remaining is how many turns the script still holds.
func (s *server) Remaining() int { return s.script.remaining() }

// take records req and returns the turn that answers it: the script's
// next turn when scripted (a closing text when the script has run out),
// a plain "ok" otherwise (a title or other side request).
func (s *server) take(req *Request, scripted bool) Turn {
	turn := Turn{Text: "ok"}
	if scripted {
		req.Scripted = true
		if t, ok := s.script.next(); ok {
			turn = t
		} else {
			turn = Text("The script has no more turns.")
		}
	}
	s.record(*req)
	return turn
}

// start pushes turns onto the script and serves h on 127.0.0.1 until the
// test ends.
func (s *server) start(turns []Turn, h http.HandlerFunc) {
	s.script.push(turns)
	s.srv = httptest.NewServer(h)
	s.t.Cleanup(s.srv.Close)
}

func (s *server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
}

func (s *server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_%04d", prefix, s.ids)
}

func readRequest(r *http.Request) Request {
	body, _ := io.ReadAll(r.Body)
	return Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events, flushing after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) send(event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b)
	if e.f != nil {
		e.f.Flush()
	}
}

// data sends an event of data alone, with the CRLF line ends Google's
// APIs use.
func (e *sse) data(data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(e.w, "data: %s\r\n\r\n", b)
	if e.f != nil {
		e.f.Flush()
	}
}

// textOf returns the text of a content value: a string, or a list of
// blocks with "text" fields.
func textOf(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			m, _ := b.(map[string]any)
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func orDefault(v, d int64) int64 {
	if v == 0 {
		return d
	}
	return v
}

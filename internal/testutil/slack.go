package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Slack is a fake Slack speaking the real wire formats: the Web API
// (POST /api/<method> with a bearer token, answered {"ok": true, …} or
// {"ok": false, "error": …}) and Socket Mode (apps.connections.open
// returns a WebSocket URL; envelopes go out on it and the app acknowledges
// each with its envelope_id; an unacknowledged one is sent again on the
// next connection). A test taps buttons and replies in threads as a user
// would.
type Slack struct {
	srv      *httptest.Server
	botToken string
	appToken string

	mu         sync.Mutex
	changed    chan struct{}
	nextTS     int
	nextEnv    int
	messages   []*SlackMessage
	ephemerals []SlackEphemeral
	queue      []slackEnvelope // sent or to send, not yet acknowledged
	acked      map[string]bool
	conn       *websocket.Conn
	connects   int
}

// SlackMessage is a message in the fake's channels.
type SlackMessage struct {
	Channel string
	TS      string
	// FromBot says the app posted it; else User did.
	FromBot  bool
	User     string
	Text     string
	ThreadTS string
	// Buttons are the actions blocks' buttons: text and value.
	Buttons [][2]string
	Updates int
}

// SlackEphemeral is a message only one user sees.
type SlackEphemeral struct {
	Channel, User, Text string
}

type slackEnvelope struct {
	ID   string
	Body []byte
}

// NewSlack starts a fake Slack whose app has the bot token (xoxb-…) and
// the app-level token (xapp-…).
func NewSlack(botToken, appToken string) *Slack {
	f := &Slack{botToken: botToken, appToken: appToken, changed: make(chan struct{}), nextTS: 1000, acked: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", f.api)
	mux.HandleFunc("/socket", f.socket)
	f.srv = httptest.NewServer(mux)
	return f
}

// URL is the Web API's base URL, to configure as [notify.slack] base_url.
func (f *Slack) URL() string { return f.srv.URL + "/api" }

// Close stops the server.
func (f *Slack) Close() {
	f.mu.Lock()
	if f.conn != nil {
		f.conn.CloseNow()
	}
	f.mu.Unlock()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

func (f *Slack) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Messages returns a copy of every message, oldest first.
func (f *Slack) Messages() []SlackMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]SlackMessage, len(f.messages))
	for i, m := range f.messages {
		out[i] = *m
	}
	return out
}

// Ephemerals returns the messages shown to one user.
func (f *Slack) Ephemerals() []SlackEphemeral {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]SlackEphemeral(nil), f.ephemerals...)
}

// Wait blocks until cond holds or timeout passes, and reports whether it
// held.
func (f *Slack) Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return cond()
		}
	}
}

// Tap presses the button labelled button on the newest app message
// containing match, as user (ID and name), delivering a block_actions
// interactive envelope over Socket Mode. It returns the envelope's id;
// Acked tells when the app acknowledged it.
func (f *Slack) Tap(userID, name, button, match string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.messages) - 1; i >= 0; i-- {
		m := f.messages[i]
		if !m.FromBot || !strings.Contains(m.Text, match) {
			continue
		}
		for _, b := range m.Buttons {
			if b[0] != button {
				continue
			}
			_, action, _ := strings.Cut(b[1], ":")
			payload := map[string]any{
				"type": "block_actions", "trigger_id": "1.2.3", "api_app_id": "A1",
				"user":      map[string]any{"id": userID, "username": name, "name": name, "team_id": "T1"},
				"team":      map[string]any{"id": "T1"},
				"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false},
				"channel":   map[string]any{"id": m.Channel},
				"message":   map[string]any{"ts": m.TS, "text": m.Text, "type": "message"},
				"actions": []any{map[string]any{"type": "button", "action_id": "ralph_" + action, "block_id": "ralph_answer",
					"value": b[1], "text": map[string]any{"type": "plain_text", "text": b[0]}, "action_ts": strconv.FormatInt(time.Now().Unix(), 10)}},
			}
			return f.envelope("interactive", payload), nil
		}
	}
	return "", fmt.Errorf("no app message with %q has a button %q", match, button)
}

// Reply posts text as user in the thread of the newest app message
// containing match, delivering the events_api envelope.
func (f *Slack) Reply(userID, text, match string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.messages) - 1; i >= 0; i-- {
		m := f.messages[i]
		if !m.FromBot || !strings.Contains(m.Text, match) {
			continue
		}
		f.nextTS++
		own := &SlackMessage{Channel: m.Channel, TS: f.ts(), User: userID, Text: text, ThreadTS: m.TS}
		f.messages = append(f.messages, own)
		payload := map[string]any{"type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event_id": "Ev" + own.TS,
			"event": map[string]any{"type": "message", "channel": m.Channel, "user": userID, "text": text, "ts": own.TS, "thread_ts": m.TS, "channel_type": "channel"}}
		return f.envelope("events_api", payload), nil
	}
	return "", fmt.Errorf("no app message with %q", match)
}

// Acked waits up to timeout for the app to acknowledge envelope id.
func (f *Slack) Acked(id string, timeout time.Duration) bool {
	return f.Wait(timeout, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.acked[id]
	})
}

func (f *Slack) ts() string { return fmt.Sprintf("1700000000.%06d", f.nextTS) }

// envelope queues a Socket Mode envelope and sends it when a connection
// is open; f.mu is held.
func (f *Slack) envelope(typ string, payload any) string {
	f.nextEnv++
	id := fmt.Sprintf("env-%d", f.nextEnv)
	body, _ := json.Marshal(map[string]any{"envelope_id": id, "type": typ, "payload": payload, "accepts_response_payload": typ == "interactive", "retry_attempt": 0, "retry_reason": ""})
	f.queue = append(f.queue, slackEnvelope{ID: id, Body: body})
	if f.conn != nil {
		_ = f.conn.Write(context.Background(), websocket.MessageText, body)
	}
	return id
}

func (f *Slack) socket(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	f.mu.Lock()
	if f.conn != nil {
		f.conn.CloseNow() // one connection at a time, as ralph keeps
	}
	f.conn = conn
	f.connects++
	hello, _ := json.Marshal(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]string{"app_id": "A1"}})
	_ = conn.Write(r.Context(), websocket.MessageText, hello)
	for _, e := range f.queue { // unacknowledged envelopes are sent again
		_ = conn.Write(r.Context(), websocket.MessageText, e.Body)
	}
	f.mu.Unlock()
	for {
		_, data, err := conn.Read(r.Context())
		if err != nil {
			f.mu.Lock()
			if f.conn == conn {
				f.conn = nil
			}
			f.mu.Unlock()
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		f.mu.Lock()
		f.acked[ack.EnvelopeID] = true
		for i, e := range f.queue {
			if e.ID == ack.EnvelopeID {
				f.queue = append(f.queue[:i], f.queue[i+1:]...)
				break
			}
		}
		f.signal()
		f.mu.Unlock()
	}
}

func (f *Slack) api(w http.ResponseWriter, r *http.Request) {
	reply := func(v map[string]any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(e string) { reply(map[string]any{"ok": false, "error": e}) }
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	want := f.botToken
	if method == "apps.connections.open" {
		want = f.appToken
	}
	if token == "" {
		fail("not_authed")
		return
	}
	if token != want {
		fail("invalid_auth")
		return
	}
	var p map[string]any
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil && method != "apps.connections.open" && method != "auth.test" {
		fail("invalid_json")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.signal()
	str := func(k string) string { s, _ := p[k].(string); return s }
	switch method {
	case "auth.test":
		reply(map[string]any{"ok": true, "user": "ralph", "user_id": "UBOT", "team": "test", "bot_id": "B1"})
	case "apps.connections.open":
		reply(map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/socket"})
	case "chat.postMessage":
		if str("channel") == "" {
			fail("channel_not_found")
			return
		}
		if str("text") == "" && p["blocks"] == nil {
			fail("no_text")
			return
		}
		f.nextTS++
		m := &SlackMessage{Channel: str("channel"), TS: f.ts(), FromBot: true, Text: blocksText(p), ThreadTS: str("thread_ts"), Buttons: slackButtons(p["blocks"])}
		f.messages = append(f.messages, m)
		reply(map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "message": map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "bot_id": "B1"}})
	case "chat.update":
		for _, m := range f.messages {
			if m.Channel == str("channel") && m.TS == str("ts") {
				if !m.FromBot {
					fail("cant_update_message")
					return
				}
				m.Text, m.Buttons = blocksText(p), slackButtons(p["blocks"])
				m.Updates++
				reply(map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text})
				return
			}
		}
		fail("message_not_found")
	case "chat.postEphemeral":
		f.ephemerals = append(f.ephemerals, SlackEphemeral{Channel: str("channel"), User: str("user"), Text: str("text")})
		reply(map[string]any{"ok": true, "message_ts": f.ts()})
	default:
		fail("unknown_method")
	}
}

// blocksText is what a message shows: its section blocks' text, else
// its text.
func blocksText(p map[string]any) string {
	var parts []string
	blocks, _ := p["blocks"].([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		if bm["type"] != "section" {
			continue
		}
		if t, ok := bm["text"].(map[string]any); ok {
			s, _ := t["text"].(string)
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		s, _ := p["text"].(string)
		return s
	}
	return strings.Join(parts, "\n")
}

func slackButtons(blocks any) [][2]string {
	var out [][2]string
	bs, _ := blocks.([]any)
	for _, b := range bs {
		bm, _ := b.(map[string]any)
		if bm["type"] != "actions" {
			continue
		}
		els, _ := bm["elements"].([]any)
		for _, e := range els {
			em, _ := e.(map[string]any)
			if em["type"] != "button" {
				continue
			}
			t, _ := em["text"].(map[string]any)
			text, _ := t["text"].(string)
			value, _ := em["value"].(string)
			out = append(out, [2]string{text, value})
		}
	}
	return out
}

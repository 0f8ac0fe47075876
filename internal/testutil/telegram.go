package testutil

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Telegram is a fake Telegram Bot API server speaking the real wire
// format (https://core.telegram.org/bots/api): POST /bot<TOKEN>/<method>
// with a JSON or form body, answered {"ok": true, "result": …} or
// {"ok": false, "error_code": N, "description": …}. It keeps the chats'
// messages with their inline keyboards, and the update queue getUpdates
// long-polls; a test taps buttons and replies as a user would.
type Telegram struct {
	srv   *httptest.Server
	token string

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	nextMsg   int64
	nextUpd   int64
	nextCB    int
	messages  []*TelegramMessage
	updates   []telegramUpdate
	confirmed int64 // updates below this id were confirmed by an offset
	answers   map[string]string
	calls     map[string]int
	failing   map[string]int // method ("*" for any) → HTTP status while down
	delays    map[string]time.Duration
	polls     int
}

// TelegramMessage is a message in the fake's chats: the bot's, with the
// keyboard it carries now, or a user's.
type TelegramMessage struct {
	ID     int64
	ChatID int64
	// FromBot says the bot sent it; else UserID did.
	FromBot bool
	UserID  int64
	Text    string
	// Buttons are the inline keyboard's buttons, row by row flattened:
	// text and callback data.
	Buttons [][2]string
	ReplyTo int64
	Edits   int
}

type telegramUpdate struct {
	ID   int64
	Body map[string]any
}

// NewTelegram starts a fake Bot API whose bot has token.
func NewTelegram(token string) *Telegram {
	f := &Telegram{token: token, changed: make(chan struct{}), nextMsg: 100, nextUpd: 1000,
		answers: map[string]string{}, calls: map[string]int{}, failing: map[string]int{}, delays: map[string]time.Duration{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// URL is the base URL to configure as [notify.telegram] base_url.
func (f *Telegram) URL() string { return f.srv.URL }

// Close stops the server.
func (f *Telegram) Close() { f.srv.CloseClientConnections(); f.srv.Close() }

// Fail makes method ("*" for every method) answer with HTTP status (500,
// 502…) until Recover.
func (f *Telegram) Fail(method string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing[method] = status
}

// Delay makes method wait d before it acts, as a slow Bot API would. A
// request its client gives up on meanwhile has no effect.
func (f *Telegram) Delay(method string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delays[method] = d
}

// Recover ends every Fail.
func (f *Telegram) Recover() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.failing)
}

// Calls counts the requests to method, failed ones included.
func (f *Telegram) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Messages returns a copy of every message, oldest first.
func (f *Telegram) Messages() []TelegramMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]TelegramMessage, len(f.messages))
	for i, m := range f.messages {
		out[i] = *m
	}
	return out
}

// Wait blocks until cond holds of the messages or timeout passes, and
// reports whether it held.
func (f *Telegram) Wait(timeout time.Duration, cond func(msgs []TelegramMessage) bool) bool {
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if cond(f.Messages()) {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return cond(f.Messages())
		}
	}
}

// Tap presses the button labelled button on the newest bot message that
// has one and whose text contains match, as user userID (@username),
// and returns the callback query's id. The bot answers it with
// answerCallbackQuery: see Answer.
func (f *Telegram) Tap(userID int64, username, button, match string) (string, error) {
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
			f.nextCB++
			id := "cb" + strconv.Itoa(f.nextCB)
			f.push(map[string]any{"callback_query": map[string]any{
				"id": id, "from": user(userID, username), "chat_instance": "1", "data": b[1],
				"message": f.wire(m),
			}})
			return id, nil
		}
	}
	return "", fmt.Errorf("no bot message with %q has a button %q", match, button)
}

// Reply sends text as user userID (@username), replying to the newest
// bot message whose text contains match.
func (f *Telegram) Reply(userID int64, username, text, match string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.messages) - 1; i >= 0; i-- {
		m := f.messages[i]
		if !m.FromBot || !strings.Contains(m.Text, match) {
			continue
		}
		f.nextMsg++
		own := &TelegramMessage{ID: f.nextMsg, ChatID: m.ChatID, UserID: userID, Text: text, ReplyTo: m.ID}
		f.messages = append(f.messages, own)
		w := f.wire(own)
		w["from"] = user(userID, username)
		w["reply_to_message"] = f.wire(m)
		f.push(map[string]any{"message": w})
		return nil
	}
	return fmt.Errorf("no bot message with %q", match)
}

// Answer waits up to timeout for the bot's answerCallbackQuery of
// callback id and returns its text.
func (f *Telegram) Answer(id string, timeout time.Duration) (string, bool) {
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		text, ok := f.answers[id]
		ch := f.changed
		f.mu.Unlock()
		if ok {
			return text, true
		}
		select {
		case <-ch:
		case <-deadline:
			return "", false
		}
	}
}

// Pending counts the updates no getUpdates offset has confirmed yet.
func (f *Telegram) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := 0
	for _, u := range f.updates {
		if u.ID >= f.confirmed {
			k++
		}
	}
	return k
}

func user(id int64, username string) map[string]any {
	u := map[string]any{"id": id, "is_bot": false, "first_name": "User" + strconv.FormatInt(id, 10)}
	if username != "" {
		u["username"] = username
	}
	return u
}

// push queues an update; f.mu is held.
func (f *Telegram) push(body map[string]any) {
	f.nextUpd++
	body["update_id"] = f.nextUpd
	f.updates = append(f.updates, telegramUpdate{ID: f.nextUpd, Body: body})
	f.signal()
}

// signal wakes the waiters; f.mu is held.
func (f *Telegram) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// wire is m as the Bot API's Message object; f.mu is held.
func (f *Telegram) wire(m *TelegramMessage) map[string]any {
	w := map[string]any{"message_id": m.ID, "date": time.Now().Unix(), "chat": map[string]any{"id": m.ChatID, "type": "group"}, "text": m.Text}
	if m.FromBot {
		w["from"] = map[string]any{"id": 1, "is_bot": true, "first_name": "ralph", "username": "ralph_test_bot"}
	}
	if len(m.Buttons) > 0 {
		var rows [][]map[string]string
		for _, b := range m.Buttons {
			rows = append(rows, []map[string]string{{"text": b[0], "callback_data": b[1]}})
		}
		w["reply_markup"] = map[string]any{"inline_keyboard": rows}
	}
	return w
}

func (f *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(code int, desc string) {
		reply(code, map[string]any{"ok": false, "error_code": code, "description": desc})
	}
	tok, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/bot"), "/")
	if !strings.HasPrefix(r.URL.Path, "/bot") || !ok {
		fail(http.StatusNotFound, "Not Found")
		return
	}
	f.mu.Lock()
	f.calls[method]++
	status := f.failing[method]
	if status == 0 {
		status = f.failing["*"]
	}
	delay := f.delays[method]
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if tok != f.token {
		fail(http.StatusUnauthorized, "Unauthorized")
		return
	}
	if status != 0 {
		fail(status, http.StatusText(status))
		return
	}
	p, err := params(r)
	if err != nil {
		fail(http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	if method == "getUpdates" {
		f.getUpdates(w, r, p, reply)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.signal()
	switch method {
	case "getMe":
		reply(200, map[string]any{"ok": true, "result": map[string]any{"id": 1, "is_bot": true, "first_name": "ralph", "username": "ralph_test_bot"}})
	case "sendMessage":
		chat, err := strconv.ParseInt(fmt.Sprint(p["chat_id"]), 10, 64)
		text, _ := p["text"].(string)
		if err != nil || text == "" {
			fail(400, "Bad Request: chat_id and text are required")
			return
		}
		if len([]rune(text)) > 4096 {
			fail(400, "Bad Request: message is too long")
			return
		}
		f.nextMsg++
		m := &TelegramMessage{ID: f.nextMsg, ChatID: chat, FromBot: true, Text: text, Buttons: buttons(p["reply_markup"])}
		if rp, ok := p["reply_parameters"].(map[string]any); ok {
			m.ReplyTo = int64(num(rp["message_id"]))
		}
		f.messages = append(f.messages, m)
		reply(200, map[string]any{"ok": true, "result": f.wire(m)})
	case "editMessageText":
		id := int64(num(p["message_id"]))
		for _, m := range f.messages {
			if m.ID != id || !m.FromBot {
				continue
			}
			text, _ := p["text"].(string)
			kb := buttons(p["reply_markup"])
			if text == m.Text && len(kb) == len(m.Buttons) {
				fail(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
				return
			}
			m.Text, m.Buttons = text, kb
			m.Edits++
			reply(200, map[string]any{"ok": true, "result": f.wire(m)})
			return
		}
		fail(400, "Bad Request: message to edit not found")
	case "answerCallbackQuery":
		id, _ := p["callback_query_id"].(string)
		if _, done := f.answers[id]; done || id == "" {
			fail(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
			return
		}
		text, _ := p["text"].(string)
		f.answers[id] = text
		reply(200, map[string]any{"ok": true, "result": true})
	default:
		fail(404, "Not Found: method not found")
	}
}

// getUpdates confirms the updates below offset and returns the rest,
// waiting up to timeout seconds for one when there is none.
func (f *Telegram) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]any, reply func(int, any)) {
	offset := int64(num(p["offset"]))
	wait := time.Duration(num(p["timeout"]) * float64(time.Second))
	deadline := time.After(wait)
	for {
		f.mu.Lock()
		if offset > f.confirmed {
			f.confirmed = offset
		}
		var out []map[string]any
		for _, u := range f.updates {
			if u.ID >= f.confirmed {
				out = append(out, u.Body)
			}
		}
		ch := f.changed
		if len(out) > 0 || wait == 0 {
			f.polls++
			f.mu.Unlock()
			if out == nil {
				out = []map[string]any{}
			}
			reply(200, map[string]any{"ok": true, "result": out})
			return
		}
		f.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			wait = 0
		case <-r.Context().Done():
			return
		}
	}
}

// params reads a Bot API request's parameters: a JSON object, or form
// fields (whose JSON-valued ones, such as reply_markup, are decoded).
func params(r *http.Request) (map[string]any, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	out := map[string]any{}
	switch ct {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &out); err != nil {
				return nil, fmt.Errorf("can't parse JSON: %v", err)
			}
		}
		return out, nil
	default:
		if err := r.ParseMultipartForm(1 << 20); err != nil && err != http.ErrNotMultipart {
			return nil, err
		}
		for k, v := range r.Form {
			out[k] = formValue(v[0])
		}
		for k, v := range r.URL.Query() {
			out[k] = formValue(v[0])
		}
		return out, nil
	}
}

func formValue(v string) any {
	var x any
	if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
		if json.Unmarshal([]byte(v), &x) == nil {
			return x
		}
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return n
	}
	return v
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		n, _ := strconv.ParseFloat(x, 64)
		return n
	}
	return 0
}

// buttons flattens an InlineKeyboardMarkup.
func buttons(markup any) [][2]string {
	m, ok := markup.(map[string]any)
	if !ok {
		return nil
	}
	rows, _ := m["inline_keyboard"].([]any)
	var out [][2]string
	for _, row := range rows {
		bs, _ := row.([]any)
		for _, b := range bs {
			bm, _ := b.(map[string]any)
			text, _ := bm["text"].(string)
			data, _ := bm["callback_data"].(string)
			out = append(out, [2]string{text, data})
		}
	}
	return out
}

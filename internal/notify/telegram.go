package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

// Telegram is a two-way channel through a Telegram bot (the Bot API over
// HTTPS, https://core.telegram.org/bots/api). A request is a message
// with an inline keyboard: Approve and Reject for a confirmation, one
// button per option for a select; a text request is answered by
// replying to the message. Answers arrive by long-polling getUpdates;
// a tap is acknowledged (answerCallbackQuery) and the message edited to
// say who decided and when.
type Telegram struct {
	wantsEvents
	// BaseURL is the Bot API server, https://api.telegram.org unless a
	// self-hosted one or a test's.
	BaseURL string
	Token   string
	ChatID  int64
	// Allow are the user IDs whose answers count.
	Allow []int64
	// LongPoll is getUpdates' timeout (default 25s).
	LongPoll time.Duration
	Client   *http.Client
}

var (
	_ Updater  = (*Telegram)(nil)
	_ Listener = (*Telegram)(nil)
)

// NewTelegram returns the channel; events empty means all.
func NewTelegram(baseURL, token string, chatID int64, allow []int64, events []string) *Telegram {
	if baseURL == "" {
		baseURL = "https://api.telegram.org"
	}
	return &Telegram{wantsEvents: events, BaseURL: strings.TrimSuffix(baseURL, "/"), Token: token, ChatID: chatID, Allow: allow,
		// A long poll that outlives its timeout by this much is a dead
		// connection, not a slow answer.
		LongPoll: 25 * time.Second, Client: &http.Client{Timeout: 90 * time.Second}}
}

// Name is "telegram".
func (t *Telegram) Name() string { return "telegram" }

// The Bot API's types, as much of them as ralph reads and writes.
type (
	tgUser struct {
		ID        int64  `json:"id"`
		IsBot     bool   `json:"is_bot"`
		Username  string `json:"username,omitempty"`
		FirstName string `json:"first_name,omitempty"`
	}
	tgChat struct {
		ID int64 `json:"id"`
	}
	tgMessage struct {
		MessageID int64      `json:"message_id"`
		From      *tgUser    `json:"from,omitempty"`
		Chat      tgChat     `json:"chat"`
		Text      string     `json:"text,omitempty"`
		ReplyTo   *tgMessage `json:"reply_to_message,omitempty"`
	}
	tgCallback struct {
		ID      string     `json:"id"`
		From    tgUser     `json:"from"`
		Message *tgMessage `json:"message,omitempty"`
		Data    string     `json:"data,omitempty"`
	}
	tgUpdate struct {
		UpdateID int64       `json:"update_id"`
		Message  *tgMessage  `json:"message,omitempty"`
		Callback *tgCallback `json:"callback_query,omitempty"`
	}
	tgButton struct {
		Text string `json:"text"`
		Data string `json:"callback_data,omitempty"`
		URL  string `json:"url,omitempty"`
	}
	tgKeyboard struct {
		Rows [][]tgButton `json:"inline_keyboard"`
	}
)

// call invokes a Bot API method with a JSON body and decodes its result
// into out (when not nil).
func (t *Telegram) call(ctx context.Context, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.BaseURL+"/bot"+t.Token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: bad base_url", method)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.Client.Do(req)
	if err != nil {
		return fmt.Errorf("telegram %s: %s", method, plainError(err))
	}
	defer resp.Body.Close()
	var r struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
		ErrorCode   int             `json:"error_code"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 8<<20)).Decode(&r); err != nil {
		return fmt.Errorf("telegram %s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	if !r.OK {
		return &APIError{Service: "telegram", Method: method, Code: r.ErrorCode, Text: r.Description}
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("telegram %s: %w", method, err)
		}
	}
	return nil
}

// Send posts m to the chat; the ref is "CHAT:MESSAGE".
func (t *Telegram) Send(ctx context.Context, m Message) (string, error) {
	in := map[string]any{"chat_id": t.ChatID, "text": telegramText(m), "link_preview_options": map[string]bool{"is_disabled": true}}
	if kb := telegramKeyboard(m); kb != nil {
		in["reply_markup"] = kb
	}
	var out tgMessage
	if err := t.call(ctx, "sendMessage", in, &out); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d", out.Chat.ID, out.MessageID), nil
}

// Update edits the message that asked req to show its answer, and takes
// its buttons away.
func (t *Telegram) Update(ctx context.Context, ref string, m Message, req store.HumanRequest) error {
	chat, msg, ok := parseRef(ref)
	if !ok {
		return fmt.Errorf("telegram: bad message ref %q", ref)
	}
	err := t.call(ctx, "editMessageText", map[string]any{"chat_id": chat, "message_id": msg,
		"text": telegramText(m) + "\n\n" + decisionLine(req), "reply_markup": tgKeyboard{Rows: [][]tgButton{}}}, nil)
	if err != nil && strings.Contains(err.Error(), "message is not modified") {
		return nil
	}
	return err
}

func parseRef(ref string) (chat, msg int64, ok bool) {
	a, b, found := strings.Cut(ref, ":")
	chat, err1 := strconv.ParseInt(a, 10, 64)
	msg, err2 := strconv.ParseInt(b, 10, 64)
	return chat, msg, found && err1 == nil && err2 == nil
}

// decisionLine is the line an answered request's message ends with.
func decisionLine(req store.HumanRequest) string {
	mark := "✅"
	if req.Rejected() {
		mark = "❌"
	}
	return mark + " " + capitalize(req.Decision())
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// telegramText is m as a plain-text message (no parse mode, so nothing
// in it needs escaping).
func telegramText(m Message) string {
	var b strings.Builder
	b.WriteString("ralph · " + m.Workspace)
	if m.Task > 0 {
		fmt.Fprintf(&b, " · task %d", m.Task)
	}
	b.WriteString("\n")
	if r := m.Request; r != nil {
		fmt.Fprintf(&b, "Request %d (%s): %s", r.ID, r.Type, r.Prompt)
		if len(r.Options) > 0 {
			b.WriteString("\nOptions: " + strings.Join(r.Options, ", "))
		}
		if !r.TimeoutAt.IsZero() {
			b.WriteString("\nTimes out at " + r.TimeoutAt.UTC().Format("2006-01-02 15:04 UTC") + " (a timeout rejects).")
		}
		if r.Type == store.HumanText {
			b.WriteString("\nReply to this message with your answer.")
		}
	} else {
		b.WriteString(m.Title)
		if m.Text != "" && m.Text != strings.TrimPrefix(m.Title, "Stall: ") {
			b.WriteString("\n" + m.Text)
		}
	}
	if m.URL != "" {
		b.WriteString("\n" + m.URL)
	}
	return trim(b.String(), 4000)
}

// Callback data is NONCE:ACTION, ACTION y (approve), n (reject) or the
// index of a select's option: the nonce, never the request's number,
// says which request.
func telegramKeyboard(m Message) *tgKeyboard {
	r := m.Request
	if r == nil || r.Nonce == "" {
		return nil
	}
	reject := tgButton{Text: "Reject", Data: r.Nonce + ":n"}
	switch {
	case r.Type == store.HumanSelect && len(r.Options) > 0:
		var rows [][]tgButton
		for i, o := range r.Options {
			rows = append(rows, []tgButton{{Text: trim(o, 60), Data: r.Nonce + ":" + strconv.Itoa(i)}})
		}
		return &tgKeyboard{Rows: append(rows, []tgButton{reject})}
	case r.Type == store.HumanText:
		return &tgKeyboard{Rows: [][]tgButton{{reject}}}
	}
	return &tgKeyboard{Rows: [][]tgButton{{{Text: "Approve", Data: r.Nonce + ":y"}, reject}}}
}

// ParseCallback reads a button's callback data: the nonce, and the
// answer it gives to a request with options.
func ParseCallback(data string, options []string) (nonce, status, response string, err error) {
	nonce, action, ok := strings.Cut(data, ":")
	if !ok || nonce == "" || strings.ContainsAny(nonce, ": ") || len(data) > 64 {
		return "", "", "", fmt.Errorf("callback data %q is not ralph's", data)
	}
	switch action {
	case "y":
		return nonce, store.HumanApproved, "", nil
	case "n":
		return nonce, store.HumanRejected, "", nil
	}
	i, err := strconv.Atoi(action)
	if err != nil || i < 0 || i >= len(options) || strconv.Itoa(i) != action {
		return "", "", "", fmt.Errorf("callback data %q names no option", data)
	}
	return nonce, store.HumanApproved, options[i], nil
}

// Listen long-polls getUpdates from the saved offset and answers
// requests from taps and replies, saving the offset after each update.
func (t *Telegram) Listen(ctx context.Context, a *Answers) error {
	log := a.Logger()
	for ctx.Err() == nil {
		var ups []tgUpdate
		in := map[string]any{"offset": a.Offset(ctx), "timeout": int(t.LongPoll / time.Second), "allowed_updates": []string{"message", "callback_query"}}
		if err := t.call(ctx, "getUpdates", in, &ups); err != nil {
			return err
		}
		for _, u := range ups {
			if ctx.Err() != nil {
				break // the rest come again on the next start
			}
			hctx, cancel := finishing(ctx)
			switch {
			case u.Callback != nil:
				t.onCallback(hctx, a, u.Callback)
			case u.Message != nil && u.Message.ReplyTo != nil && u.Message.Chat.ID == t.ChatID:
				t.onReply(hctx, a, u.Message)
			}
			cancel()
			if err := a.SetOffset(ctx, u.UpdateID+1); err != nil {
				log.Warn("save the update offset", "err", err)
			}
		}
	}
	return ctx.Err()
}

func who(u tgUser) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	if u.FirstName != "" {
		return fmt.Sprintf("%s (%d)", u.FirstName, u.ID)
	}
	return strconv.FormatInt(u.ID, 10)
}

func (t *Telegram) onCallback(ctx context.Context, a *Answers, cb *tgCallback) {
	toast := func(text string, alert bool) {
		if err := t.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": cb.ID, "text": trim(text, 200), "show_alert": alert}, nil); err != nil {
			a.Logger().Warn("answer a tap", "err", err)
		}
	}
	nonce, _, _ := strings.Cut(cb.Data, ":")
	if !slices.Contains(t.Allow, cb.From.ID) {
		a.Refuse(ctx, who(cb.From), nonce)
		toast("You may not answer ralph's requests here (not on the allowlist).", true)
		return
	}
	m, ok := a.Message(ctx, nonce)
	if !ok || m.Request == nil {
		toast("ralph knows no such request.", true)
		return
	}
	nonce, status, response, err := ParseCallback(cb.Data, m.Request.Options)
	if err != nil {
		toast("ralph knows no such answer.", true)
		return
	}
	req, err := a.Answer(ctx, nonce, status, response, who(cb.From))
	var ae *store.AnswerError
	switch {
	case errors.Is(err, ErrAlreadyAnswered):
		toast("Already answered: "+req.Decision()+". Nothing changed.", true)
	case errors.As(err, &ae):
		toast(ae.Error(), true)
		return
	case err != nil:
		a.Logger().Warn("answer a request", "err", err)
		toast("ralph could not record that; try again.", true)
		return
	default:
		toast(capitalize(req.Status)+".", false)
	}
	if cb.Message != nil {
		ref := fmt.Sprintf("%d:%d", cb.Message.Chat.ID, cb.Message.MessageID)
		if err := t.Update(ctx, ref, m, req); err != nil {
			a.Logger().Warn("show the answer on the message", "err", err)
		}
	}
}

func (t *Telegram) onReply(ctx context.Context, a *Answers, msg *tgMessage) {
	if msg.ReplyTo.From == nil || !msg.ReplyTo.From.IsBot {
		return // a reply to a person: never one of ralph's messages, nothing to wait for
	}
	ref := fmt.Sprintf("%d:%d", msg.Chat.ID, msg.ReplyTo.MessageID)
	nonce, ok := a.Nonce(ctx, ref)
	if !ok || msg.From == nil {
		return // a reply to some other message
	}
	say := func(text string) {
		if err := t.call(ctx, "sendMessage", map[string]any{"chat_id": msg.Chat.ID, "text": text,
			"reply_parameters": map[string]any{"message_id": msg.MessageID}}, nil); err != nil {
			a.Logger().Warn("reply", "err", err)
		}
	}
	if !slices.Contains(t.Allow, msg.From.ID) {
		a.Refuse(ctx, who(*msg.From), nonce)
		say("You may not answer ralph's requests here (not on the allowlist).")
		return
	}
	m, _ := a.Message(ctx, nonce)
	if m.Request == nil || m.Request.Type != store.HumanText {
		say("Use the buttons to answer this request; a reply answers only a request for text.")
		return
	}
	text := strings.TrimSpace(msg.Text)
	req, err := a.Answer(ctx, nonce, store.HumanApproved, text, who(*msg.From))
	var ae *store.AnswerError
	switch {
	case errors.Is(err, ErrAlreadyAnswered):
		say("Already answered: " + req.Decision() + ". Nothing changed.")
		return
	case errors.As(err, &ae):
		say(ae.Error())
		return
	case err != nil:
		a.Logger().Warn("answer a request", "err", err)
		say("ralph could not record that; try again.")
		return
	}
	if err := t.Update(ctx, ref, m, req); err != nil {
		a.Logger().Warn("show the answer on the message", "err", err)
	}
}

// Check asks the Bot API who the bot is (getMe), for ralph doctor and
// ralph notify test.
func (t *Telegram) Check(ctx context.Context) (string, error) {
	var me tgUser
	if err := t.call(ctx, "getMe", map[string]any{}, &me); err != nil {
		return "", err
	}
	return "@" + me.Username, nil
}

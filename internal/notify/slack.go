package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/ralph-harness/ralph/internal/store"
)

// Slack is a two-way channel through a Slack app: messages with Block
// Kit buttons posted with the Web API (chat.postMessage), answers taken
// over Socket Mode (apps.connections.open, then a WebSocket whose
// envelopes are acknowledged), so no public URL is needed. A text
// request is answered by a reply in the message's thread.
type Slack struct {
	wantsEvents
	// BaseURL is the Web API, https://slack.com/api unless a test's.
	BaseURL string
	// BotToken (xoxb-) posts; AppToken (xapp-) opens the socket.
	BotToken, AppToken string
	Channel            string
	// Allow are the user IDs whose answers count.
	Allow  []string
	Client *http.Client
}

var (
	_ Updater  = (*Slack)(nil)
	_ Listener = (*Slack)(nil)
)

// NewSlack returns the channel; events empty means all.
func NewSlack(baseURL, botToken, appToken, channel string, allow, events []string) *Slack {
	if baseURL == "" {
		baseURL = "https://slack.com/api"
	}
	return &Slack{wantsEvents: events, BaseURL: strings.TrimSuffix(baseURL, "/"), BotToken: botToken, AppToken: appToken,
		Channel: channel, Allow: allow, Client: &http.Client{Timeout: 30 * time.Second}}
}

// Name is "slack".
func (s *Slack) Name() string { return "slack" }

// call invokes a Web API method with a JSON body and decodes the
// response into out (when not nil).
func (s *Slack) call(ctx context.Context, token, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack %s: bad base_url", method)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.Client.Do(req)
	if err != nil {
		return fmt.Errorf("slack %s: %s", method, plainError(err))
	}
	defer resp.Body.Close()
	raw := json.RawMessage{}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 8<<20)).Decode(&raw); err != nil {
		return fmt.Errorf("slack %s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	var r struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || !r.OK {
		code := resp.StatusCode
		if code == http.StatusOK {
			code = http.StatusBadRequest // Slack says no with a 200
		}
		return &APIError{Service: "slack", Method: method, Code: code, Text: r.Error}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// slackBlocks is m as Block Kit: the text, and the buttons a request
// offers, each button's value NONCE:ACTION as Telegram's callback data.
func slackBlocks(m Message, decision string) []any {
	text := slackText(m)
	if decision != "" {
		text += "\n\n" + decision
	}
	blocks := []any{map[string]any{"type": "section", "text": map[string]any{"type": "plain_text", "text": trim(text, 3000)}}}
	if decision != "" {
		return blocks
	}
	kb := telegramKeyboard(m)
	if kb == nil {
		return blocks
	}
	var els []any
	for _, row := range kb.Rows {
		for _, b := range row {
			_, action, _ := strings.Cut(b.Data, ":")
			el := map[string]any{"type": "button", "action_id": "ralph_" + action, "value": b.Data,
				"text": map[string]any{"type": "plain_text", "text": b.Text}}
			switch action {
			case "y":
				el["style"] = "primary"
			case "n":
				el["style"] = "danger"
			}
			els = append(els, el)
		}
	}
	return append(blocks, map[string]any{"type": "actions", "block_id": "ralph_answer", "elements": els})
}

// slackText is m as plain text; a text request is answered in the
// message's thread.
func slackText(m Message) string {
	return strings.Replace(telegramText(m), "Reply to this message with your answer.", "Reply in this message's thread with your answer.", 1)
}

// Send posts m to the channel; the ref is "CHANNEL:TS".
func (s *Slack) Send(ctx context.Context, m Message) (string, error) {
	var out struct {
		Channel string `json:"channel"`
		TS      string `json:"ts"`
	}
	in := map[string]any{"channel": s.Channel, "text": trim(slackText(m), 3000), "blocks": slackBlocks(m, ""), "unfurl_links": false}
	if err := s.call(ctx, s.BotToken, "chat.postMessage", in, &out); err != nil {
		return "", err
	}
	return out.Channel + ":" + out.TS, nil
}

// Update replaces the message that asked req with its answer.
func (s *Slack) Update(ctx context.Context, ref string, m Message, req store.HumanRequest) error {
	channel, ts, ok := strings.Cut(ref, ":")
	if !ok {
		return fmt.Errorf("slack: bad message ref %q", ref)
	}
	d := decisionLine(req)
	return s.call(ctx, s.BotToken, "chat.update", map[string]any{"channel": channel, "ts": ts,
		"text": trim(slackText(m)+"\n\n"+d, 3000), "blocks": slackBlocks(m, d)}, nil)
}

// The Socket Mode envelope and the parts of its payloads ralph reads.
type (
	slackEnvelope struct {
		EnvelopeID string          `json:"envelope_id"`
		Type       string          `json:"type"`
		Payload    json.RawMessage `json:"payload"`
	}
	slackUser struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
	}
	slackActions struct {
		Type    string    `json:"type"`
		User    slackUser `json:"user"`
		Actions []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"actions"`
		Container struct {
			ChannelID string `json:"channel_id"`
			MessageTS string `json:"message_ts"`
		} `json:"container"`
	}
	slackEvent struct {
		Event struct {
			Type     string `json:"type"`
			Subtype  string `json:"subtype"`
			User     string `json:"user"`
			BotID    string `json:"bot_id"`
			Text     string `json:"text"`
			Channel  string `json:"channel"`
			TS       string `json:"ts"`
			ThreadTS string `json:"thread_ts"`
		} `json:"event"`
	}
)

// Listen opens a Socket Mode connection and answers requests from
// button taps and thread replies until ctx ends or Slack asks it to
// reconnect (then it returns, and the notifier starts it again).
// Every envelope is acknowledged before it is handled.
func (s *Slack) Listen(ctx context.Context, a *Answers) error {
	var open struct {
		URL string `json:"url"`
	}
	if err := s.call(ctx, s.AppToken, "apps.connections.open", map[string]any{}, &open); err != nil {
		return err
	}
	conn, _, err := websocket.Dial(ctx, open.URL, &websocket.DialOptions{HTTPClient: s.Client})
	if err != nil {
		return fmt.Errorf("slack socket: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	// A connection that died without a word answers no ping: close it,
	// and the read below fails and the notifier reconnects.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				err := conn.Ping(pctx)
				cancel()
				if err != nil {
					conn.CloseNow()
					return
				}
			}
		}
	}()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return fmt.Errorf("slack socket: %w", err)
		}
		var env slackEnvelope
		if err := json.Unmarshal(data, &env); err != nil {
			continue
		}
		if env.EnvelopeID != "" {
			ack, _ := json.Marshal(map[string]string{"envelope_id": env.EnvelopeID})
			if err := conn.Write(ctx, websocket.MessageText, ack); err != nil {
				return fmt.Errorf("slack socket: %w", err)
			}
		}
		if env.Type == "disconnect" {
			return errors.New("slack asked to reconnect")
		}
		s.handle(ctx, a, env)
	}
}

// handle answers one envelope's tap or reply, finishing it when ctx
// ends meanwhile.
func (s *Slack) handle(ctx context.Context, a *Answers, env slackEnvelope) {
	ctx, cancel := finishing(ctx)
	defer cancel()
	switch env.Type {
	case "interactive":
		var p slackActions
		if json.Unmarshal(env.Payload, &p) == nil && p.Type == "block_actions" && len(p.Actions) > 0 {
			s.onAction(ctx, a, p)
		}
	case "events_api":
		var p slackEvent
		if json.Unmarshal(env.Payload, &p) == nil {
			s.onEvent(ctx, a, p)
		}
	}
}

func slackWho(u slackUser) string {
	for _, n := range []string{u.Username, u.Name} {
		if n != "" {
			return n
		}
	}
	return u.ID
}

// tell posts a message only user sees.
func (s *Slack) tell(ctx context.Context, a *Answers, channel, user, text string) {
	if err := s.call(ctx, s.BotToken, "chat.postEphemeral", map[string]any{"channel": channel, "user": user, "text": text}, nil); err != nil {
		a.Logger().Warn("tell a user", "err", err)
	}
}

func (s *Slack) onAction(ctx context.Context, a *Answers, p slackActions) {
	value := p.Actions[0].Value
	channel, ref := p.Container.ChannelID, p.Container.ChannelID+":"+p.Container.MessageTS
	nonce, _, _ := strings.Cut(value, ":")
	if !slices.Contains(s.Allow, p.User.ID) {
		a.Refuse(ctx, slackWho(p.User), nonce)
		s.tell(ctx, a, channel, p.User.ID, "You may not answer ralph's requests here (not on the allowlist).")
		return
	}
	m, ok := a.Message(ctx, nonce)
	if !ok || m.Request == nil {
		s.tell(ctx, a, channel, p.User.ID, "ralph knows no such request.")
		return
	}
	nonce, status, response, err := ParseCallback(value, m.Request.Options)
	if err != nil {
		s.tell(ctx, a, channel, p.User.ID, "ralph knows no such answer.")
		return
	}
	req, err := a.Answer(ctx, nonce, status, response, slackWho(p.User))
	s.settle(ctx, a, channel, p.User.ID, ref, m, req, err)
}

// settle tells the person what became of their answer and shows the
// request's answer on its message.
func (s *Slack) settle(ctx context.Context, a *Answers, channel, user, ref string, m Message, req store.HumanRequest, err error) {
	var ae *store.AnswerError
	switch {
	case errors.Is(err, ErrAlreadyAnswered):
		s.tell(ctx, a, channel, user, "Already answered: "+req.Decision()+". Nothing changed.")
	case errors.As(err, &ae):
		s.tell(ctx, a, channel, user, ae.Error())
		return
	case err != nil:
		a.Logger().Warn("answer a request", "err", err)
		s.tell(ctx, a, channel, user, "ralph could not record that; try again.")
		return
	}
	if err := s.Update(ctx, ref, m, req); err != nil {
		a.Logger().Warn("show the answer on the message", "err", err)
	}
}

func (s *Slack) onEvent(ctx context.Context, a *Answers, p slackEvent) {
	e := p.Event
	if e.Type != "message" || e.ThreadTS == "" || e.ThreadTS == e.TS || e.BotID != "" || e.Subtype != "" || e.User == "" {
		return // not a person's reply in a thread
	}
	ref := e.Channel + ":" + e.ThreadTS
	nonce, ok := a.Nonce(ctx, ref)
	if !ok {
		return
	}
	if !slices.Contains(s.Allow, e.User) {
		a.Refuse(ctx, e.User, nonce)
		s.tell(ctx, a, e.Channel, e.User, "You may not answer ralph's requests here (not on the allowlist).")
		return
	}
	m, _ := a.Message(ctx, nonce)
	if m.Request == nil || m.Request.Type != store.HumanText {
		s.tell(ctx, a, e.Channel, e.User, "Use the buttons to answer this request; a reply answers only a request for text.")
		return
	}
	req, err := a.Answer(ctx, nonce, store.HumanApproved, strings.TrimSpace(e.Text), e.User)
	s.settle(ctx, a, e.Channel, e.User, ref, m, req, err)
}

// Check asks the Web API who the bot is (auth.test), for ralph doctor.
func (s *Slack) Check(ctx context.Context) (string, error) {
	var me struct {
		User string `json:"user"`
		Team string `json:"team"`
	}
	if err := s.call(ctx, s.BotToken, "auth.test", map[string]any{}, &me); err != nil {
		return "", err
	}
	return me.User + " in " + me.Team, nil
}

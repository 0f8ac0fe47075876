package notify

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
)

// Ntfy is a one-way channel: a push to an ntfy topic
// (https://docs.ntfy.sh/publish/), with a "view" action to the
// dashboard when one is configured.
type Ntfy struct {
	wantsEvents
	URL    string
	Topic  string
	Token  string
	Client *http.Client
}

// NewNtfy returns the channel; events empty means all.
func NewNtfy(server, topic, token string, events []string) *Ntfy {
	if server == "" {
		server = "https://ntfy.sh"
	}
	return &Ntfy{wantsEvents: events, URL: strings.TrimSuffix(server, "/"), Topic: topic, Token: token, Client: &http.Client{Timeout: 30 * time.Second}}
}

// Name is "ntfy".
func (n *Ntfy) Name() string { return "ntfy" }

// Send publishes m to the topic.
func (n *Ntfy) Send(ctx context.Context, m Message) (string, error) {
	text := telegramText(m)
	if m.Request != nil {
		text += "\nAnswer with `ralph approve " + fmt.Sprint(m.Request.ID) + "` or on the dashboard."
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL+"/"+url.PathEscape(n.Topic), strings.NewReader(text))
	if err != nil {
		return "", fmt.Errorf("ntfy: %w", err)
	}
	title := m.Title
	if m.Request != nil {
		title = fmt.Sprintf("ralph: request %d waits", m.Request.ID)
	}
	// Headers are Latin-1 on the wire: ntfy reads RFC 2047 encoded ones.
	req.Header.Set("Title", mimeWord(trim(title, 200)))
	req.Header.Set("Tags", "robot")
	if m.Event == config.EventHuman || m.Event == config.EventCost {
		req.Header.Set("Priority", "high")
	}
	if m.URL != "" {
		req.Header.Set("Actions", "view, Open dashboard, "+m.URL)
		req.Header.Set("Click", m.URL)
	}
	if n.Token != "" {
		req.Header.Set("Authorization", "Bearer "+n.Token)
	}
	resp, err := n.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("ntfy: %s", plainError(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("ntfy: HTTP %d", resp.StatusCode)
	}
	return "", nil
}

func mimeWord(s string) string {
	for _, r := range s {
		if r >= 0x80 || r < 0x20 {
			return mimeQ.Encode("utf-8", s)
		}
	}
	return s
}

var mimeQ = mime.BEncoding

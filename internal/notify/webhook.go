package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// SignatureHeader carries a webhook body's HMAC-SHA256 under the shared
// secret, as "sha256=HEX".
const SignatureHeader = "X-Ralph-Signature"

// Webhook is a one-way channel: each message POSTed as JSON, signed.
type Webhook struct {
	wantsEvents
	URL    string
	Secret []byte
	Client *http.Client
}

// NewWebhook returns the channel; events empty means all.
func NewWebhook(url string, secret []byte, events []string) *Webhook {
	return &Webhook{wantsEvents: events, URL: url, Secret: secret, Client: &http.Client{Timeout: 30 * time.Second}}
}

// Name is "webhook".
func (w *Webhook) Name() string { return "webhook" }

// Sign returns the signature header's value for body under secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether sig is body's signature under secret, in
// constant time: what a receiver does.
func Verify(secret, body []byte, sig string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(sig))
}

// Send POSTs m; any status but 2xx is an error (and the outbox retries).
func (w *Webhook) Send(ctx context.Context, m Message) (string, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ralph")
	req.Header.Set("X-Ralph-Event", m.Event)
	if len(w.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(w.Secret, body))
	}
	resp, err := w.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("webhook: %s", plainError(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("webhook: HTTP %d", resp.StatusCode)
	}
	return "", nil
}

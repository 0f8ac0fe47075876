package config

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Notify is the notify key: a command, and the channels people are told
// through. No secret is ever here: each channel names the environment
// variable that holds its token.
type Notify struct {
	// Command runs (argv, never a shell string) when a human is needed
	// or a run stalls; the message is its last argument.
	Command []string `toml:"command"`
	// DashboardURL, when set, is linked from messages (ralph serve's
	// address as the phone reaches it).
	DashboardURL string `toml:"dashboard_url"`
	// Telegram is [notify.telegram], nil when not configured.
	Telegram *Telegram `toml:"telegram"`
	// Slack is [notify.slack], nil when not configured.
	Slack *Slack `toml:"slack"`
	// Ntfy is [notify.ntfy], nil when not configured.
	Ntfy *Ntfy `toml:"ntfy"`
	// Webhook is [notify.webhook], nil when not configured.
	Webhook *Webhook `toml:"webhook"`
}

// Notification events a channel can subscribe to.
const (
	EventHuman    = "human"    // a human request waits
	EventEnd      = "end"      // a run ended
	EventStall    = "stall"    // a stall was detected
	EventGates    = "gates"    // the gates failed twice or more in a row
	EventCost     = "cost"     // the task reached 50, 80 or 100% of max_cost
	EventFallback = "fallback" // the agent fell back to the next backend
	EventTamper   = "tamper"   // the guard held or undid an agent's change
)

// Events are every event's name, in the order messages list them.
var Events = []string{EventHuman, EventEnd, EventStall, EventGates, EventCost, EventFallback, EventTamper}

// Telegram is [notify.telegram]: a bot that posts to one chat and takes
// answers from the users on its allowlist.
type Telegram struct {
	// TokenEnv names the environment variable holding the bot token
	// (default TELEGRAM_BOT_TOKEN).
	TokenEnv string `toml:"token_env"`
	// ChatID is the chat the bot posts to.
	ChatID int64 `toml:"chat_id"`
	// Allow are the user IDs whose taps and replies answer requests.
	Allow []int64 `toml:"allow"`
	// BaseURL is the Bot API server (default https://api.telegram.org).
	BaseURL string `toml:"base_url"`
	// Events are the events sent; empty means all.
	Events []string `toml:"events"`
}

// Slack is [notify.slack]: a Slack app that posts to one channel and
// takes answers over Socket Mode from the users on its allowlist.
type Slack struct {
	// TokenEnv names the variable holding the bot token, xoxb-… (default
	// SLACK_BOT_TOKEN); AppTokenEnv the app-level token with
	// connections:write, xapp-… (default SLACK_APP_TOKEN).
	TokenEnv    string `toml:"token_env"`
	AppTokenEnv string `toml:"app_token_env"`
	// Channel is the channel's ID (C0123…).
	Channel string `toml:"channel"`
	// Allow are the user IDs (U0123…) whose taps and replies answer.
	Allow []string `toml:"allow"`
	// BaseURL is the Web API (default https://slack.com/api).
	BaseURL string   `toml:"base_url"`
	Events  []string `toml:"events"`
}

// Ntfy is [notify.ntfy]: one-way pushes to an ntfy topic.
type Ntfy struct {
	// URL is the server (default https://ntfy.sh).
	URL   string `toml:"url"`
	Topic string `toml:"topic"`
	// TokenEnv names the environment variable holding an access token,
	// empty for none.
	TokenEnv string   `toml:"token_env"`
	Events   []string `toml:"events"`
}

// Webhook is [notify.webhook]: each event POSTed as JSON, signed with
// HMAC-SHA256 in the X-Ralph-Signature header.
type Webhook struct {
	URL string `toml:"url"`
	// SecretEnv names the environment variable holding the signing
	// secret (default RALPH_WEBHOOK_SECRET).
	SecretEnv string   `toml:"secret_env"`
	Events    []string `toml:"events"`
}

// Wants reports whether a channel subscribed to events gets event.
func Wants(events []string, event string) bool {
	return len(events) == 0 || slices.Contains(events, event)
}

// decodeNotify decodes the notify key: a list is the command, a table
// the whole [notify].
func decodeNotify(md toml.MetaData, raw toml.Primitive, cfg *Config) error {
	if !md.IsDefined("notify") {
		return nil
	}
	if md.Type("notify") == "Array" {
		if err := md.PrimitiveDecode(raw, &cfg.Notify.Command); err != nil {
			return decodeError(err)
		}
		return nil
	}
	if err := md.PrimitiveDecode(raw, &cfg.Notify); err != nil {
		return decodeError(err)
	}
	return nil
}

func (n Notify) validate() error {
	checkURL := func(where, v string) error {
		if v == "" {
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: %s = %q is not an http(s) URL", FileName, where, v)
		}
		return nil
	}
	checkEvents := func(table string, events []string) error {
		for _, e := range events {
			if !slices.Contains(Events, e) {
				return fmt.Errorf("%s: [%s] events: unknown event %q (want %s)", FileName, table, e, strings.Join(Events, ", "))
			}
		}
		return nil
	}
	checkEnv := func(where, v string) error {
		if strings.ContainsAny(v, "= \t") || strings.HasPrefix(v, "$") {
			return fmt.Errorf("%s: %s = %q names an environment variable: write its name, never the secret", FileName, where, v)
		}
		return nil
	}
	if err := checkURL("[notify] dashboard_url", n.DashboardURL); err != nil {
		return err
	}
	if t := n.Telegram; t != nil {
		if t.ChatID == 0 {
			return fmt.Errorf("%s: [notify.telegram] needs chat_id", FileName)
		}
		if err := checkURL("[notify.telegram] base_url", t.BaseURL); err != nil {
			return err
		}
		if err := checkEnv("[notify.telegram] token_env", t.TokenEnv); err != nil {
			return err
		}
		if err := checkEvents("notify.telegram", t.Events); err != nil {
			return err
		}
	}
	if t := n.Slack; t != nil {
		if t.Channel == "" {
			return fmt.Errorf("%s: [notify.slack] needs channel", FileName)
		}
		if err := checkURL("[notify.slack] base_url", t.BaseURL); err != nil {
			return err
		}
		for _, e := range [][2]string{{"token_env", t.TokenEnv}, {"app_token_env", t.AppTokenEnv}} {
			if err := checkEnv("[notify.slack] "+e[0], e[1]); err != nil {
				return err
			}
		}
		if err := checkEvents("notify.slack", t.Events); err != nil {
			return err
		}
	}
	if t := n.Ntfy; t != nil {
		if t.Topic == "" {
			return fmt.Errorf("%s: [notify.ntfy] needs topic", FileName)
		}
		if err := checkURL("[notify.ntfy] url", t.URL); err != nil {
			return err
		}
		if err := checkEnv("[notify.ntfy] token_env", t.TokenEnv); err != nil {
			return err
		}
		if err := checkEvents("notify.ntfy", t.Events); err != nil {
			return err
		}
	}
	if w := n.Webhook; w != nil {
		if w.URL == "" {
			return fmt.Errorf("%s: [notify.webhook] needs url", FileName)
		}
		if err := checkURL("[notify.webhook] url", w.URL); err != nil {
			return err
		}
		if err := checkEnv("[notify.webhook] secret_env", w.SecretEnv); err != nil {
			return err
		}
		if err := checkEvents("notify.webhook", w.Events); err != nil {
			return err
		}
	}
	return nil
}

// Default environment variables of the channels' secrets.
const (
	DefaultTelegramTokenEnv = "TELEGRAM_BOT_TOKEN"
	DefaultWebhookSecretEnv = "RALPH_WEBHOOK_SECRET"
	DefaultSlackTokenEnv    = "SLACK_BOT_TOKEN"
	DefaultSlackAppTokenEnv = "SLACK_APP_TOKEN"
)

// SecretVars names the environment variables holding the secrets of the
// channels n configures, defaults included: ralph reads them, and no
// program it starts (an agent above all, which could post as the bot or
// read its answers) inherits them.
func (n Notify) SecretVars() []string {
	var vars []string
	if n.Telegram != nil {
		vars = append(vars, cmp.Or(n.Telegram.TokenEnv, DefaultTelegramTokenEnv))
	}
	if n.Slack != nil {
		vars = append(vars, cmp.Or(n.Slack.TokenEnv, DefaultSlackTokenEnv), cmp.Or(n.Slack.AppTokenEnv, DefaultSlackAppTokenEnv))
	}
	if n.Ntfy != nil && n.Ntfy.TokenEnv != "" {
		vars = append(vars, n.Ntfy.TokenEnv)
	}
	if n.Webhook != nil {
		vars = append(vars, cmp.Or(n.Webhook.SecretEnv, DefaultWebhookSecretEnv))
	}
	return vars
}

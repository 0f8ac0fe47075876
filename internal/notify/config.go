package notify

import (
	"fmt"

	"github.com/ralph-harness/ralph/internal/config"
)

// Default environment variables of the channels' secrets.
const (
	DefaultTelegramTokenEnv = config.DefaultTelegramTokenEnv
	DefaultWebhookSecretEnv = config.DefaultWebhookSecretEnv
	DefaultSlackTokenEnv    = config.DefaultSlackTokenEnv
	DefaultSlackAppTokenEnv = config.DefaultSlackAppTokenEnv
)

// Channels builds the channels [notify] configures, reading their
// secrets with getenv from the variables ralph.toml names. A channel
// whose secret is missing is left out, with an error naming the
// variable; the others are built.
func Channels(cfg config.Notify, getenv func(string) string) ([]Channel, []error) {
	var out []Channel
	var errs []error
	if t := cfg.Telegram; t != nil {
		env := t.TokenEnv
		if env == "" {
			env = DefaultTelegramTokenEnv
		}
		if token := getenv(env); token == "" {
			errs = append(errs, fmt.Errorf("[notify.telegram]: $%s is not set: no Telegram messages", env))
		} else {
			out = append(out, NewTelegram(t.BaseURL, token, t.ChatID, t.Allow, t.Events))
		}
	}
	if sl := cfg.Slack; sl != nil {
		bot, app := or(sl.TokenEnv, DefaultSlackTokenEnv), or(sl.AppTokenEnv, DefaultSlackAppTokenEnv)
		switch {
		case getenv(bot) == "":
			errs = append(errs, fmt.Errorf("[notify.slack]: $%s is not set: no Slack messages", bot))
		case getenv(app) == "":
			errs = append(errs, fmt.Errorf("[notify.slack]: $%s is not set: no Slack messages (Socket Mode needs the app-level token)", app))
		default:
			out = append(out, NewSlack(sl.BaseURL, getenv(bot), getenv(app), sl.Channel, sl.Allow, sl.Events))
		}
	}
	if n := cfg.Ntfy; n != nil {
		token := ""
		if n.TokenEnv != "" {
			if token = getenv(n.TokenEnv); token == "" {
				errs = append(errs, fmt.Errorf("[notify.ntfy]: $%s is not set: no ntfy messages", n.TokenEnv))
			}
		}
		if n.TokenEnv == "" || token != "" {
			out = append(out, NewNtfy(n.URL, n.Topic, token, n.Events))
		}
	}
	if w := cfg.Webhook; w != nil {
		env := w.SecretEnv
		if env == "" {
			env = DefaultWebhookSecretEnv
		}
		if secret := getenv(env); secret == "" {
			errs = append(errs, fmt.Errorf("[notify.webhook]: $%s is not set: webhooks are signed, so none are sent", env))
		} else {
			out = append(out, NewWebhook(w.URL, []byte(secret), w.Events))
		}
	}
	return out, errs
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

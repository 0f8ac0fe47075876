package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/notify"
	"github.com/ralph-harness/ralph/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptTelegramToken is the fake bot's token in the scripts.
const scriptTelegramToken = "123456:script-bot-token-abcdef"

// telegramHolder is a script's fake Bot API, started by telegram start.
type telegramHolder struct{ tg *testutil.Telegram }

// cmdTelegram drives a fake Telegram Bot API (testutil.Telegram):
//
//	telegram start FILE             start it; @TELEGRAM_URL@ in FILE becomes its URL,
//	                                and $TELEGRAM_BOT_TOKEN its token
//	telegram wait REGEXP            wait for a bot message matching REGEXP; print it
//	telegram tap USER NAME BUTTON MATCH
//	                                tap BUTTON on the newest bot message containing
//	                                MATCH as user USER (@NAME); print the bot's answer
//	telegram reply USER NAME TEXT MATCH
//	                                reply TEXT to that message
//	telegram messages               print the bot's messages, separated by ---
//	telegram fail METHOD STATUS     make METHOD (or *) answer HTTP STATUS
//	telegram recover                end every fail
func cmdTelegram(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: telegram start|wait|tap|reply|messages|fail|recover ...")
	}
	h := ts.Value("telegram").(*telegramHolder)
	if args[0] != "start" && h.tg == nil {
		ts.Fatalf("telegram: run telegram start first")
	}
	const wait = 30 * time.Second
	switch args[0] {
	case "start":
		if len(args) != 2 {
			ts.Fatalf("usage: telegram start FILE")
		}
		h.tg = testutil.NewTelegram(scriptTelegramToken)
		ts.Defer(h.tg.Close)
		ts.Setenv("TELEGRAM_BOT_TOKEN", scriptTelegramToken)
		path := ts.MkAbs(args[1])
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "@TELEGRAM_URL@", h.tg.URL())), 0o644))
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: telegram wait REGEXP")
		}
		re := regexp.MustCompile(args[1])
		var found string
		if !h.tg.Wait(wait, func(ms []testutil.TelegramMessage) bool {
			for _, m := range ms {
				if m.FromBot && re.MatchString(m.Text) {
					found = m.Text
					return true
				}
			}
			return false
		}) {
			ts.Fatalf("no bot message matches %q; the bot sent:\n%s", args[1], botMessages(h.tg))
		}
		fmt.Fprintln(ts.Stdout(), found)
	case "tap":
		if len(args) != 5 {
			ts.Fatalf("usage: telegram tap USER NAME BUTTON MATCH")
		}
		user, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		id, err := h.tg.Tap(user, args[2], args[3], args[4])
		if err != nil {
			ts.Fatalf("telegram tap: %v; the bot sent:\n%s", err, botMessages(h.tg))
		}
		text, ok := h.tg.Answer(id, wait)
		if !ok {
			ts.Fatalf("the bot never answered the tap (answerCallbackQuery)")
		}
		fmt.Fprintln(ts.Stdout(), text)
	case "reply":
		if len(args) != 5 {
			ts.Fatalf("usage: telegram reply USER NAME TEXT MATCH")
		}
		user, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		ts.Check(h.tg.Reply(user, args[2], args[3], args[4]))
	case "messages":
		fmt.Fprint(ts.Stdout(), botMessages(h.tg))
	case "fail":
		if len(args) != 3 {
			ts.Fatalf("usage: telegram fail METHOD STATUS")
		}
		status, err := strconv.Atoi(args[2])
		ts.Check(err)
		h.tg.Fail(args[1], status)
	case "recover":
		h.tg.Recover()
	default:
		ts.Fatalf("telegram: unknown subcommand %q", args[0])
	}
}

func botMessages(tg *testutil.Telegram) string {
	var b strings.Builder
	for _, m := range tg.Messages() {
		if m.FromBot {
			fmt.Fprintf(&b, "%s\n---\n", m.Text)
		}
	}
	return b.String()
}

// scriptWebhookSecret signs the scripts' webhooks.
const scriptWebhookSecret = "script-webhook-secret-value"

// webhookHolder is a script's webhook receiver, started by webhook start.
type webhookHolder struct {
	srv *httptest.Server
	mu  sync.Mutex
	ok  []string // bodies whose signature verified
	bad int
}

// cmdWebhook runs a webhook receiver that checks each delivery's
// HMAC-SHA256 signature, answering 401 to a bad one:
//
//	webhook start FILE     start it; @WEBHOOK_URL@ in FILE becomes its URL and
//	                       $RALPH_WEBHOOK_SECRET the shared secret
//	webhook wait REGEXP    wait for a signed delivery whose JSON matches; print it
func cmdWebhook(ts *testscript.TestScript, neg bool, args []string) {
	h := ts.Value("webhook").(*webhookHolder)
	switch {
	case !neg && len(args) == 2 && args[0] == "start":
		h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			h.mu.Lock()
			defer h.mu.Unlock()
			if !notify.Verify([]byte(scriptWebhookSecret), body, r.Header.Get(notify.SignatureHeader)) {
				h.bad++
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
			h.ok = append(h.ok, string(body))
		}))
		ts.Defer(h.srv.Close)
		ts.Setenv("RALPH_WEBHOOK_SECRET", scriptWebhookSecret)
		path := ts.MkAbs(args[1])
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "@WEBHOOK_URL@", h.srv.URL)), 0o644))
	case !neg && len(args) == 2 && args[0] == "wait" && h.srv != nil:
		re := regexp.MustCompile(args[1])
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			h.mu.Lock()
			for _, b := range h.ok {
				if re.MatchString(b) {
					h.mu.Unlock()
					fmt.Fprintln(ts.Stdout(), b)
					return
				}
			}
			h.mu.Unlock()
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		ts.Fatalf("no signed delivery matches %q; %d bad signatures; signed ones:\n%s", args[1], h.bad, strings.Join(h.ok, "\n"))
	default:
		ts.Fatalf("usage: webhook start FILE | webhook wait REGEXP")
	}
}

// The fake Slack app's tokens in the scripts.
const (
	scriptSlackBot = "xoxb-script-bot-token-1234"
	scriptSlackApp = "xapp-script-app-token-1234"
)

// slackHolder is a script's fake Slack, started by slack start.
type slackHolder struct{ sl *testutil.Slack }

// cmdSlack drives a fake Slack (testutil.Slack):
//
//	slack start FILE                   start it; @SLACK_URL@ in FILE becomes its Web API
//	                                   URL, $SLACK_BOT_TOKEN and $SLACK_APP_TOKEN its tokens
//	slack wait REGEXP                  wait for an app message matching REGEXP; print it
//	slack tap USER NAME BUTTON MATCH   tap BUTTON over Socket Mode; wait for the ack
//	slack reply USER TEXT MATCH        reply TEXT in the message's thread; wait for the ack
//	slack ephemeral REGEXP             wait for a message to one user matching REGEXP
func cmdSlack(ts *testscript.TestScript, neg bool, args []string) {
	h := ts.Value("slack").(*slackHolder)
	if neg || len(args) == 0 || (args[0] != "start" && h.sl == nil) {
		ts.Fatalf("usage: slack start FILE first, then slack wait|tap|reply|ephemeral")
	}
	const wait = 30 * time.Second
	acked := func(id string, err error) {
		if err != nil {
			ts.Fatalf("slack: %v", err)
		}
		if !h.sl.Acked(id, wait) {
			ts.Fatalf("slack: envelope %s was never acknowledged", id)
		}
	}
	switch {
	case args[0] == "start" && len(args) == 2:
		h.sl = testutil.NewSlack(scriptSlackBot, scriptSlackApp)
		ts.Defer(h.sl.Close)
		ts.Setenv("SLACK_BOT_TOKEN", scriptSlackBot)
		ts.Setenv("SLACK_APP_TOKEN", scriptSlackApp)
		path := ts.MkAbs(args[1])
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(strings.ReplaceAll(string(data), "@SLACK_URL@", h.sl.URL())), 0o644))
	case args[0] == "wait" && len(args) == 2:
		re := regexp.MustCompile(args[1])
		var found string
		if !h.sl.Wait(wait, func() bool {
			for _, m := range h.sl.Messages() {
				if m.FromBot && re.MatchString(m.Text) {
					found = m.Text
					return true
				}
			}
			return false
		}) {
			ts.Fatalf("no app message matches %q; messages: %+v", args[1], h.sl.Messages())
		}
		fmt.Fprintln(ts.Stdout(), found)
	case args[0] == "tap" && len(args) == 5:
		acked(h.sl.Tap(args[1], args[2], args[3], args[4]))
	case args[0] == "reply" && len(args) == 4:
		acked(h.sl.Reply(args[1], args[2], args[3]))
	case args[0] == "ephemeral" && len(args) == 2:
		re := regexp.MustCompile(args[1])
		if !h.sl.Wait(wait, func() bool {
			for _, e := range h.sl.Ephemerals() {
				if re.MatchString(e.Text) {
					return true
				}
			}
			return false
		}) {
			ts.Fatalf("no ephemeral message matches %q: %+v", args[1], h.sl.Ephemerals())
		}
	default:
		ts.Fatalf("slack: bad arguments %q", args)
	}
}

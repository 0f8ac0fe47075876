package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/notify"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/testutil"
)

const (
	token = "123456:test-token-abcdef"
	chat  = -1001
	ann   = 42 // on the allowlist
	eve   = 66 // not
)

type fixture struct {
	st  *store.Store
	tg  *testutil.Telegram
	ch  *notify.Telegram
	req store.HumanRequest
}

func setup(t *testing.T, typ string, options ...string) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	task, err := st.CreateTask(ctx, 3, "ship it", "fresh", "script")
	if err != nil {
		t.Fatal(err)
	}
	req, err := st.RequestHuman(ctx, store.HumanRequest{TaskID: task, Type: typ, Prompt: "Deploy to prod?", Options: options})
	if err != nil {
		t.Fatal(err)
	}
	tg := testutil.NewTelegram(token)
	t.Cleanup(tg.Close)
	ch := notify.NewTelegram(tg.URL(), token, chat, []int64{ann}, nil)
	ch.LongPoll = time.Second
	return &fixture{st: st, tg: tg, ch: ch, req: req}
}

func (f *fixture) start(t *testing.T, chans ...notify.Channel) func() {
	t.Helper()
	if chans == nil {
		chans = []notify.Channel{f.ch}
	}
	n := notify.New(notify.Options{Store: f.st, Channels: chans, Workspace: "shop", Poll: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	stop := n.Start(context.Background())
	t.Cleanup(stop)
	return stop
}

func (f *fixture) waitMessage(t *testing.T, substr string) {
	t.Helper()
	if !f.tg.Wait(10*time.Second, func(ms []testutil.TelegramMessage) bool {
		for _, m := range ms {
			if strings.Contains(m.Text, substr) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no Telegram message with %q; messages: %+v", substr, f.tg.Messages())
	}
}

func (f *fixture) tap(t *testing.T, user int64, name, button string) string {
	t.Helper()
	id, err := f.tg.Tap(user, name, button, "Deploy to prod?")
	if err != nil {
		t.Fatal(err)
	}
	text, ok := f.tg.Answer(id, 10*time.Second)
	if !ok {
		t.Fatalf("the bot never answered tap %s", id)
	}
	return text
}

func (f *fixture) request(t *testing.T) store.HumanRequest {
	t.Helper()
	r, err := f.st.HumanRequestByID(context.Background(), f.req.ID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTelegramButtons(t *testing.T) {
	tests := []struct {
		name, typ string
		options   []string
		button    string
		status    string
		response  string
	}{
		{"approve", store.HumanConfirmation, nil, "Approve", store.HumanApproved, ""},
		{"reject", store.HumanConfirmation, nil, "Reject", store.HumanRejected, ""},
		{"select", store.HumanSelect, []string{"blue", "green"}, "green", store.HumanApproved, "green"},
		{"reject text", store.HumanText, nil, "Reject", store.HumanRejected, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, tt.typ, tt.options...)
			f.start(t)
			f.waitMessage(t, "Request 1 ("+tt.typ+"): Deploy to prod?")
			f.tap(t, ann, "ann", tt.button)
			r := f.request(t)
			if r.Status != tt.status || r.Response != tt.response || r.AnsweredVia != "telegram" || r.AnsweredBy != "@ann" {
				t.Fatalf("request after the tap = %+v", r)
			}
			f.waitMessage(t, "by @ann (telegram)")
			msgs := f.tg.Messages()
			if len(msgs[0].Buttons) != 0 {
				t.Errorf("the answered message still has buttons: %v", msgs[0].Buttons)
			}
		})
	}
}

func TestTelegramReplyAnswersText(t *testing.T) {
	f := setup(t, store.HumanText)
	f.start(t)
	f.waitMessage(t, "Reply to this message with your answer.")
	if err := f.tg.Reply(ann, "ann", "use the blue one", "Deploy to prod?"); err != nil {
		t.Fatal(err)
	}
	f.waitMessage(t, "Approved by @ann (telegram): use the blue one")
	if r := f.request(t); r.Response != "use the blue one" {
		t.Fatalf("request = %+v", r)
	}
}

func TestTelegramRefusesStrangers(t *testing.T) {
	f := setup(t, store.HumanConfirmation)
	f.start(t)
	f.waitMessage(t, "Deploy to prod?")
	if got := f.tap(t, eve, "eve", "Approve"); !strings.Contains(got, "not on the allowlist") {
		t.Errorf("the stranger was told %q", got)
	}
	if r := f.request(t); r.Status != store.HumanPending {
		t.Fatalf("a stranger's tap answered the request: %+v", r)
	}
	refused, err := f.st.Refusals(context.Background())
	if err != nil || len(refused) != 1 || refused[0].Who != "@eve" || refused[0].RequestID != f.req.ID {
		t.Fatalf("refusals = %+v, %v", refused, err)
	}
}

func TestTelegramTapAfterCLI(t *testing.T) {
	f := setup(t, store.HumanConfirmation)
	f.start(t)
	f.waitMessage(t, "Deploy to prod?")
	if _, err := f.st.ResolveHumanAs(context.Background(), f.req.ID, store.HumanApproved, "", store.Answerer{Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	// The message shows the CLI's answer without a tap…
	f.waitMessage(t, "Approved via cli")
	// …and a tap on a stale copy of the keyboard changes nothing.
	f.tg.Wait(0, func([]testutil.TelegramMessage) bool { return true })
	_, err := f.tg.Tap(ann, "ann", "Reject", "Deploy to prod?")
	if err == nil {
		t.Fatal("the answered message kept its buttons")
	}
}

func TestTelegramDownThenUp(t *testing.T) {
	f := setup(t, store.HumanConfirmation)
	f.tg.Fail("*", http.StatusInternalServerError)
	f.start(t)
	// The sender keeps trying while the service is down…
	deadline := time.Now().Add(10 * time.Second)
	for f.tg.Calls("sendMessage") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := f.request(t); r.Status != store.HumanPending {
		t.Fatalf("request = %+v", r)
	}
	// …and the message goes out once it is back, and the tap answers.
	f.tg.Recover()
	f.waitMessage(t, "Deploy to prod?")
	f.tap(t, ann, "ann", "Approve")
	if r := f.request(t); r.Status != store.HumanApproved {
		t.Fatalf("request = %+v", r)
	}
}

// A restart resends nothing already sent, keeps the update offset, and
// still takes the answer given while nothing listened.
func TestTelegramRestart(t *testing.T) {
	f := setup(t, store.HumanConfirmation)
	stop := f.start(t)
	f.waitMessage(t, "Deploy to prod?")
	stop()
	id, err := f.tg.Tap(ann, "ann", "Approve", "Deploy to prod?")
	if err != nil {
		t.Fatal(err)
	}
	f.start(t)
	if _, ok := f.tg.Answer(id, 10*time.Second); !ok {
		t.Fatal("the tap made while stopped was never answered")
	}
	if r := f.request(t); r.Status != store.HumanApproved {
		t.Fatalf("request = %+v", r)
	}
	if n := f.tg.Calls("sendMessage"); n != 1 {
		t.Errorf("sendMessage called %d times, want 1", n)
	}
}

// ralph notify test stops listening as soon as the tap is recorded; the
// tap is still acknowledged to the person and shown on the message when
// the Bot API is slow to take the acknowledgement.
func TestNotifyTestFinishesTheTap(t *testing.T) {
	f := setup(t, store.HumanConfirmation)
	f.tg.Delay("answerCallbackQuery", 300*time.Millisecond)
	n := notify.New(notify.Options{Store: f.st, Channels: []notify.Channel{f.ch}, Workspace: "shop",
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- n.Test(context.Background(), "", 10*time.Second, &out) }()
	f.waitMessage(t, "tap Approve to prove the round trip")
	id, err := f.tg.Tap(ann, "ann", "Approve", "round trip")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Test: %v; it printed:\n%s", err, out.String())
	}
	// Test has returned: whatever its listener did is done.
	if text, ok := f.tg.Answer(id, 0); !ok || text != "Approved." {
		t.Errorf("the tap's answer = %q, %v; want \"Approved.\"", text, ok)
	}
	f.waitMessage(t, "Approved by @ann")
	if !strings.Contains(out.String(), "telegram: Approve tapped by @ann: the round trip works") {
		t.Errorf("Test printed:\n%s", out.String())
	}
}

func TestWebhookSigned(t *testing.T) {
	secret := []byte("hook-secret")
	var mu sync.Mutex
	var got []notify.Message
	fails := 1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 { // the first delivery fails: the outbox retries
			fails--
			http.Error(w, "busy", http.StatusBadGateway)
			return
		}
		if !notify.Verify(secret, body, r.Header.Get(notify.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var m notify.Message
		_ = json.Unmarshal(body, &m)
		got = append(got, m)
	}))
	defer srv.Close()
	f := setup(t, store.HumanSelect, "a", "b")
	f.start(t, notify.NewWebhook(srv.URL, secret, nil))
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		k := len(got)
		mu.Unlock()
		if k > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Event != "human" || got[0].Request == nil || got[0].Request.ID != f.req.ID || got[0].Workspace != "shop" {
		t.Fatalf("webhook got %+v", got)
	}
	if !notify.Verify(secret, []byte("x"), notify.Sign(secret, []byte("x"))) || notify.Verify(secret, []byte("x"), notify.Sign([]byte("other"), []byte("x"))) {
		t.Error("Verify accepts the wrong signature or refuses the right one")
	}
}

func TestParseCallback(t *testing.T) {
	opts := []string{"blue", "green"}
	for _, tc := range []struct {
		data, status, response string
		ok                     bool
	}{
		{"abc:y", store.HumanApproved, "", true},
		{"abc:n", store.HumanRejected, "", true},
		{"abc:1", store.HumanApproved, "green", true},
		{"abc:2", "", "", false},
		{"abc:01", "", "", false},
		{"abc:-1", "", "", false},
		{"abc", "", "", false},
		{":y", "", "", false},
		{"7:y:z", "", "", false},
	} {
		_, status, response, err := notify.ParseCallback(tc.data, opts)
		if (err == nil) != tc.ok || status != tc.status || response != tc.response {
			t.Errorf("ParseCallback(%q) = %q, %q, %v", tc.data, status, response, err)
		}
	}
}

func FuzzParseCallback(f *testing.F) {
	for _, s := range []string{"abc:y", "abc:n", "abc:0", "x:99", "", ":", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		opts := []string{"blue", "green"}
		nonce, status, response, err := notify.ParseCallback(data, opts)
		if err != nil {
			return
		}
		if nonce == "" || (status != store.HumanApproved && status != store.HumanRejected) {
			t.Fatalf("ParseCallback(%q) = %q, %q", data, nonce, status)
		}
		if response != "" && response != "blue" && response != "green" {
			t.Fatalf("ParseCallback(%q) answered %q, no option", data, response)
		}
	})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestNtfy(t *testing.T) {
	type push struct {
		path, title, actions, auth, priority, body string
	}
	got := make(chan push, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- push{r.URL.Path, r.Header.Get("Title"), r.Header.Get("Actions"), r.Header.Get("Authorization"), r.Header.Get("Priority"), string(body)}
		_, _ = io.WriteString(w, `{"id":"x","event":"message"}`)
	}))
	defer srv.Close()
	f := setup(t, store.HumanConfirmation)
	n := notify.New(notify.Options{Store: f.st, Channels: []notify.Channel{notify.NewNtfy(srv.URL, "ralph-alerts", "tk_secret", nil)},
		Workspace: "shop", DashboardURL: "http://box:8080", Poll: 20 * time.Millisecond})
	t.Cleanup(n.Start(context.Background()))
	select {
	case p := <-got:
		want := push{"/ralph-alerts", "ralph: request 1 waits", "view, Open dashboard, http://box:8080", "Bearer tk_secret", "high", ""}
		p.body, want.body = "", ""
		if p != want {
			t.Errorf("push = %+v, want %+v", p, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing pushed to ntfy")
	}
}

// capture is a channel that keeps what it is sent.
type capture struct {
	mu   sync.Mutex
	msgs []notify.Message
}

var _ notify.Channel = (*capture)(nil)

func (c *capture) Name() string        { return "capture" }
func (c *capture) Wants(e string) bool { return e != "human" }
func (c *capture) Send(_ context.Context, m notify.Message) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, m)
	return "", nil
}

func (c *capture) titles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.msgs {
		out = append(out, m.Title)
	}
	return out
}

// Cost steps and the harness's events are each one message; events from
// before the notifier first started are history, not news.
func TestEventsAndCost(t *testing.T) {
	ctx := context.Background()
	f := setup(t, store.HumanConfirmation)
	task := f.req.TaskID
	harness := func(kind, text string, iteration int) {
		if _, err := f.st.AddEvent(ctx, store.Event{TaskID: task, Iteration: iteration, Source: store.SourceHarness, Kind: kind, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	spend := func(n int, usd float64) {
		if err := f.st.StartIteration(ctx, task, n, "build", ""); err != nil {
			t.Fatal(err)
		}
		if err := f.st.EndIteration(ctx, store.Iteration{TaskID: task, Number: n, Phase: "build", Outcome: "continue", CostUSD: usd}); err != nil {
			t.Fatal(err)
		}
	}
	harness("stall", "old news from before", 1)
	c := &capture{}
	n := notify.New(notify.Options{Store: f.st, Channels: []notify.Channel{c}, Workspace: "shop", MaxCost: 1, Poll: 10 * time.Millisecond})
	stop := n.Start(ctx)
	spend(1, 0.6)
	waitTitles(t, c, 1)
	spend(2, 0.3)
	waitTitles(t, c, 2)
	harness("gates-failed", "gates failed (tests); feedback.md says how to fix them (1 of 5 attempts)", 2)
	harness("gates-failed", "gates failed (tests); feedback.md says how to fix them (2 of 5 attempts)", 2)
	harness("fallback", "claude ran out; iteration 3 runs on codex", 2)
	waitTitles(t, c, 4)
	spend(3, 0.2)
	waitTitles(t, c, 5)
	harness("stall", "the agent stalled twice in task 3 (repeat)", 3)
	if err := f.st.EndTask(ctx, task, store.TaskDone, "stalled", "the agent stalled twice in task 3 (repeat)"); err != nil {
		t.Fatal(err)
	}
	harness("end", "stalled: the agent stalled twice in task 3 (repeat)", 3)
	stop() // the last scan sends what is left
	want := []string{
		"Cost at 50% of max_cost: $0.60 of $1.00",
		"Cost at 80% of max_cost: $0.90 of $1.00",
		"Gate failures: 2 in a row: gates failed (tests); feedback.md says how to fix them (2 of 5 attempts)",
		"Agent fallback: claude ran out; iteration 3 runs on codex",
		"Cost at 100% of max_cost: $1.10 of $1.00",
		"Stall: the agent stalled twice in task 3 (repeat)",
		"Run ended: stalled (exit 7) after 3 iterations, $1.10",
	}
	if diff := strings.Join(c.titles(), "\n"); diff != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", diff, strings.Join(want, "\n"))
	}
}

func waitTitles(t *testing.T, c *capture, k int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if len(c.titles()) >= k {
			return
		}
	}
	t.Fatalf("after 10s: %q, want %d messages", c.titles(), k)
}

// heldSend is a Slack channel whose sends return only when release is
// closed, after the service has posted the message: a person can answer
// before the send returns.
type heldSend struct {
	*notify.Slack
	release chan struct{}
}

func (h heldSend) Send(ctx context.Context, m notify.Message) (string, error) {
	ref, err := h.Slack.Send(ctx, m)
	<-h.release
	return ref, err
}

// A reply in the thread of a message whose send has not returned yet (so
// its ref is not recorded) is not lost: it waits for the send, then
// answers the request.
func TestReplyBeforeTheSendReturned(t *testing.T) {
	const bot, app = "xoxb-test-bot-token", "xapp-test-app-token"
	f := setup(t, store.HumanText)
	sl := testutil.NewSlack(bot, app)
	t.Cleanup(sl.Close)
	release := make(chan struct{})
	f.start(t, heldSend{notify.NewSlack(sl.URL(), bot, app, "C1", []string{"U42"}, nil), release})
	if !sl.Wait(10*time.Second, func() bool { return len(sl.Messages()) > 0 }) {
		t.Fatal("the message was never posted")
	}
	id, err := sl.Reply("U42", "the blue one", "Deploy to prod?")
	if err != nil {
		t.Fatal(err)
	}
	if !sl.Acked(id, 10*time.Second) {
		t.Fatal("the envelope was never acknowledged")
	}
	time.Sleep(50 * time.Millisecond) // the listener looks the thread up meanwhile
	close(release)
	if !sl.Wait(10*time.Second, func() bool { return sl.Messages()[0].Updates > 0 }) {
		t.Fatal("the reply was lost: the message was never updated with the answer")
	}
	if r := f.request(t); r.Status != store.HumanApproved || r.Response != "the blue one" {
		t.Fatalf("request = %+v", r)
	}
}

func TestSlack(t *testing.T) {
	const bot, app = "xoxb-test-bot-token", "xapp-test-app-token"
	tests := []struct {
		name, typ      string
		options        []string
		act            func(sl *testutil.Slack) (string, error)
		status, answer string
	}{
		{"select", store.HumanSelect, []string{"eu", "us"}, func(sl *testutil.Slack) (string, error) { return sl.Tap("U42", "ann", "us", "Deploy to prod?") }, store.HumanApproved, "us"},
		{"reject", store.HumanConfirmation, nil, func(sl *testutil.Slack) (string, error) { return sl.Tap("U42", "ann", "Reject", "Deploy to prod?") }, store.HumanRejected, ""},
		{"text in the thread", store.HumanText, nil, func(sl *testutil.Slack) (string, error) { return sl.Reply("U42", "the blue one", "Deploy to prod?") }, store.HumanApproved, "the blue one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, tt.typ, tt.options...)
			sl := testutil.NewSlack(bot, app)
			t.Cleanup(sl.Close)
			f.start(t, notify.NewSlack(sl.URL(), bot, app, "C1", []string{"U42"}, nil))
			if !sl.Wait(10*time.Second, func() bool { ms := sl.Messages(); return len(ms) > 0 && len(ms[0].Buttons) > 0 }) {
				t.Fatalf("no message with buttons: %+v", sl.Messages())
			}
			// A stranger's tap is refused and told so.
			id, err := sl.Tap("U66", "eve", sl.Messages()[0].Buttons[0][0], "Deploy to prod?")
			if err != nil {
				t.Fatal(err)
			}
			if !sl.Acked(id, 10*time.Second) {
				t.Fatal("the envelope was never acknowledged")
			}
			if !sl.Wait(10*time.Second, func() bool { return len(sl.Ephemerals()) == 1 }) || !strings.Contains(sl.Ephemerals()[0].Text, "not on the allowlist") {
				t.Fatalf("ephemerals = %+v", sl.Ephemerals())
			}
			if r := f.request(t); r.Status != store.HumanPending {
				t.Fatalf("a stranger answered: %+v", r)
			}
			id, err = tt.act(sl)
			if err != nil {
				t.Fatal(err)
			}
			if !sl.Acked(id, 10*time.Second) {
				t.Fatal("the envelope was never acknowledged")
			}
			if !sl.Wait(10*time.Second, func() bool { return sl.Messages()[0].Updates > 0 }) {
				t.Fatal("the message was never updated with the answer")
			}
			r := f.request(t)
			if r.Status != tt.status || r.Response != tt.answer || r.AnsweredVia != "slack" {
				t.Fatalf("request = %+v", r)
			}
			if m := sl.Messages()[0]; len(m.Buttons) != 0 || !strings.Contains(m.Text, "(slack)") {
				t.Errorf("the answered message = %+v", m)
			}
		})
	}
}

// Of two processes that want to notify, one leads; the other takes over
// when it stops.
func TestLead(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".ralph", "notify.lock")
	started := make(chan string, 2)
	start := func(name string) func() func() {
		return func() func() { started <- name; return func() {} }
	}
	stopA := notify.Lead(context.Background(), path, 10*time.Millisecond, start("a"))
	if got := <-started; got != "a" {
		t.Fatalf("%s led first", got)
	}
	stopB := notify.Lead(context.Background(), path, 10*time.Millisecond, start("b"))
	defer stopB()
	if _, err := notify.TryLead(path); err != notify.ErrLeaderElsewhere {
		t.Fatalf("TryLead while a leads: %v", err)
	}
	select {
	case got := <-started:
		t.Fatalf("%s started while a led", got)
	case <-time.After(50 * time.Millisecond):
	}
	stopA()
	select {
	case got := <-started:
		if got != "b" {
			t.Fatalf("%s took over", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b never took over")
	}
}

// Package notify tells people what a run needs and what it did, through
// channels (Telegram, ntfy, webhooks), and takes the answers to human
// requests that two-way channels receive back into the store, where the
// waiting run reads them: a channel is one more answerer, beside
// `ralph approve`, the dashboard and Temporal signals.
//
// Everything goes through the store. The Notifier watches it for pending
// human requests, for the harness's events (a run ended, a stall, a
// fallback, a tamper) and for the task's cost against max_cost, and queues
// one message per channel and subject in a durable outbox (notify_outbox).
// Each channel's sender works through its queue with backoff, so a
// channel that is down delays nothing and a restart resends nothing
// already sent. A two-way channel's listener resolves requests with
// store.ResolveHumanAs, naming the channel and the person; its position
// in the update stream is kept in the store's state, so a kill -9 and a
// resume lose no answer. Delivery is at least once: a process killed
// between a channel taking a message and the outbox recording it sends
// that message again on its next start, with the same buttons, so either
// copy answers the request.
package notify

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/store"
)

// Message is one notification, as every channel renders it. It is kept
// in the outbox as JSON, so a resend says what the first send said.
type Message struct {
	// Event is what happened: one of config.Events.
	Event     string `json:"event"`
	Workspace string `json:"workspace"`
	// Task is the task's number, 0 for none.
	Task int `json:"task,omitempty"`
	// Title is the one line that says it; Text the rest.
	Title string `json:"title"`
	Text  string `json:"text,omitempty"`
	// URL links the dashboard, when one is configured.
	URL string `json:"url,omitempty"`
	// Request is the human request the message asks, nil for none.
	Request *Request `json:"request,omitempty"`
	// The end of a run.
	Reason     string  `json:"reason,omitempty"`
	ExitCode   int     `json:"exit_code,omitempty"`
	Iterations int     `json:"iterations,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
}

// Request is the part of a human request a message carries.
type Request struct {
	ID        int64     `json:"id"`
	Type      string    `json:"type"`
	Prompt    string    `json:"prompt"`
	Options   []string  `json:"options,omitempty"`
	TimeoutAt time.Time `json:"timeout_at,omitzero"`
	// Nonce is the unguessable token the message's buttons carry;
	// never sent to one-way channels.
	Nonce string `json:"-"`
}

// Channel delivers messages to one service.
type Channel interface {
	// Name is the channel's name in ralph.toml: telegram, ntfy, webhook.
	Name() string
	// Wants reports whether the channel subscribed to event.
	Wants(event string) bool
	// Send delivers m and returns the service's id of the message (for
	// the channels that edit or take replies to it later).
	Send(ctx context.Context, m Message) (ref string, err error)
}

// Updater is a channel that shows a request's answer on the message
// that asked it.
type Updater interface {
	Channel
	Update(ctx context.Context, ref string, m Message, answered store.HumanRequest) error
}

// Listener is a two-way channel: Listen receives answers until ctx ends
// and hands them to a.
type Listener interface {
	Channel
	Listen(ctx context.Context, a *Answers) error
}

// Options configure a Notifier.
type Options struct {
	Store    *store.Store
	Channels []Channel
	// Workspace names the workspace in messages.
	Workspace string
	// DashboardURL, when set, is linked from messages.
	DashboardURL string
	// MaxCost is the task's cost cap; 0 sends no cost messages.
	MaxCost float64
	// Scrub takes secrets out of every message; nil means the process's.
	Scrub  *secrets.Scrubber
	Logger *slog.Logger
	// Poll is how often the store is looked at (default 250ms).
	Poll time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Notifier watches the store and sends what it finds to its channels.
type Notifier struct {
	opt   Options
	st    *store.Store
	log   *slog.Logger
	tasks map[int64]store.Task
	// sending holds, by channel name, a lock held from a message's send
	// until its ref is recorded: a reply that finds no message under its
	// ref waits for it before looking again (Answers.Nonce), as a person
	// can answer a message before the send that posted it has returned.
	sending sync.Map // string → *sync.Mutex
}

// sendLock is the channel's lock of n.sending.
func (n *Notifier) sendLock(channel string) *sync.Mutex {
	l, _ := n.sending.LoadOrStore(channel, new(sync.Mutex))
	return l.(*sync.Mutex)
}

// New returns a notifier; Start runs it.
func New(opt Options) *Notifier {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Poll == 0 {
		opt.Poll = 250 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Scrub == nil {
		opt.Scrub = secrets.ForProcess("")
	}
	return &Notifier{opt: opt, st: opt.Store, log: opt.Logger.With("component", "notify"), tasks: map[int64]store.Task{}}
}

// keyCursor holds the id of the last harness event the notifier looked at.
const keyCursor = "notify:cursor"

// flushWait bounds the last delivery when the notifier stops, so that a
// run's last message goes out without a dead channel holding the exit.
const flushWait = 5 * time.Second

// Start runs the notifier in the background until stop is called; stop
// looks at the store one last time and gives the queued messages a few
// seconds to go out (flushWait), after a tap or reply being answered at
// that moment is finished (finishTimeout at most).
func (n *Notifier) Start(ctx context.Context) (stop func()) {
	if len(n.opt.Channels) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if _, ok, _ := n.st.State(ctx, keyCursor); !ok {
		// The first start tells about what happens from now on, not
		// about the workspace's history.
		if last, err := n.st.LastEventID(ctx); err == nil {
			_ = n.st.SetState(ctx, keyCursor, fmt.Sprint(last))
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { n.watch(ctx) })
	for _, ch := range n.opt.Channels {
		wg.Go(func() { n.sender(ctx, ch) })
		if l, ok := ch.(Listener); ok {
			wg.Go(func() { n.listen(ctx, l) })
		}
	}
	return sync.OnceFunc(func() {
		cancel()
		wg.Wait()
		fctx, fcancel := context.WithTimeout(context.Background(), flushWait)
		defer fcancel()
		n.scan(fctx)
		var fw sync.WaitGroup
		for _, ch := range n.opt.Channels {
			fw.Go(func() { n.deliver(fctx, ch) })
		}
		fw.Wait()
	})
}

func (n *Notifier) watch(ctx context.Context) {
	t := time.NewTicker(n.opt.Poll)
	defer t.Stop()
	for {
		n.scan(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *Notifier) sender(ctx context.Context, ch Channel) {
	t := time.NewTicker(n.opt.Poll)
	defer t.Stop()
	for {
		n.deliver(ctx, ch)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listen runs l's listener, starting it again after a pause when it
// fails, until ctx ends.
func (n *Notifier) listen(ctx context.Context, l Listener) {
	a := &Answers{n: n, channel: l.Name()}
	for fails := 0; ctx.Err() == nil; fails++ {
		err := l.Listen(ctx, a)
		if ctx.Err() != nil {
			return
		}
		n.log.Warn("listening for answers failed; trying again", "channel", l.Name(), "err", n.opt.Scrub.String(fmt.Sprint(err)))
		select {
		case <-ctx.Done():
		case <-time.After(Backoff(fails)):
		}
	}
}

// Backoff is the wait before attempt n+1 after n+1 failures: 1s
// doubling, at most 5 minutes.
func Backoff(fails int) time.Duration {
	return time.Duration(math.Min(float64(time.Second)*math.Pow(2, float64(min(fails, 20))), float64(5*time.Minute)))
}

// deliver sends ch's due messages, oldest first, and records each
// outcome: sent with its ref, or the error and when to try again.
func (n *Notifier) deliver(ctx context.Context, ch Channel) {
	queued, err := n.st.Notifications(ctx, ch.Name(), store.OutboxQueued)
	if err != nil {
		return
	}
	now := n.opt.Now()
	for _, q := range queued {
		if q.NextAt.After(now) || ctx.Err() != nil {
			continue
		}
		m, err := decode(q)
		if err != nil {
			_ = n.st.RetryNotification(ctx, q.ID, now.Add(24*time.Hour), err.Error())
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		lock := n.sendLock(ch.Name())
		lock.Lock()
		ref, err := ch.Send(sctx, m)
		cancel()
		if err == nil {
			_ = n.st.MarkNotificationSent(context.WithoutCancel(ctx), q.ID, ref)
		}
		lock.Unlock()
		if err != nil {
			msg := n.opt.Scrub.String(plainError(err))
			level := slog.LevelWarn // the first failure shows; the retries go to the log
			if q.Attempts > 0 {
				level = slog.LevelInfo
			}
			n.log.Log(ctx, level, "notification not sent; retrying", "channel", ch.Name(), "key", q.Key, "attempt", q.Attempts+1, "err", msg)
			_ = n.st.RetryNotification(context.WithoutCancel(ctx), q.ID, n.opt.Now().Add(Backoff(q.Attempts)), msg)
			return // the channel is down: the rest waits with it, in order
		}
		n.log.Info("notification sent", "channel", ch.Name(), "key", q.Key, "ref", ref)
	}
}

// plainError is err without the URL an HTTP client error names: a bot
// token travels in the URL.
func plainError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// APIError is a service's refusal of a call: Code is its HTTP-like
// status (Telegram's error_code; 400 for Slack's ok:false).
type APIError struct {
	Service, Method string
	Code            int
	Text            string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Service, e.Method, e.Code, e.Text)
}

// permanent reports whether err is a refusal that asking again will not
// change (a message that is gone, a bad request), not an outage.
func permanent(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code >= 400 && ae.Code < 500 && ae.Code != http.StatusTooManyRequests
}

// newNonce returns an unguessable token for a message's buttons.
func newNonce() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ErrAlreadyAnswered means a request was answered before: by another
// channel, the CLI, the dashboard, or a timeout.
var ErrAlreadyAnswered = errors.New("request already answered")

// ErrUnknownRequest means an answer names no request this workspace's
// messages asked.
var ErrUnknownRequest = errors.New("no such request")

// Answers is what a two-way channel hands answers to: it resolves them
// in the store and keeps the channel's place in its update stream.
type Answers struct {
	n       *Notifier
	channel string
	// probe, when set, is Test's message: answers to it touch no request.
	probe *probe
}

// Answer resolves the request whose message carries nonce with status
// and response, as answered by who. It returns the request resolved;
// with ErrAlreadyAnswered, the request as it was answered before; with
// a *store.AnswerError, a select or text request the answer does not fit.
func (a *Answers) Answer(ctx context.Context, nonce, status, response, who string) (store.HumanRequest, error) {
	if p := a.probe; p != nil && nonce == p.nonce {
		req := store.HumanRequest{Type: p.msg.Request.Type, Prompt: p.msg.Request.Prompt, Status: status, Response: response,
			AnsweredVia: a.channel, AnsweredBy: who, ResolvedAt: a.n.opt.Now()}
		select {
		case p.got <- req:
		default:
		}
		return req, nil
	}
	q, err := a.n.st.NotificationByNonce(ctx, a.channel, nonce)
	if errors.Is(err, store.ErrNoNotification) || (err == nil && q.RequestID == 0) {
		return store.HumanRequest{}, ErrUnknownRequest
	}
	if err != nil {
		return store.HumanRequest{}, err
	}
	req, err := a.n.st.HumanRequestByID(ctx, q.RequestID)
	if err != nil {
		return store.HumanRequest{}, err
	}
	if err := req.CheckAnswer(status, response); err != nil {
		return req, err
	}
	done, err := a.n.st.ResolveHumanAs(ctx, req.ID, status, response, store.Answerer{Via: a.channel, By: who})
	var np *store.NotPendingError
	if errors.As(err, &np) {
		return np.Request, ErrAlreadyAnswered
	}
	if err != nil {
		return req, err
	}
	// The channel shows the answer itself; the watcher need not.
	_ = a.n.st.CloseNotification(ctx, q.ID)
	return done, nil
}

// Nonce returns the nonce of the message the channel calls ref (the
// message a reply answers); ok is false for a message that asked nothing.
func (a *Answers) Nonce(ctx context.Context, ref string) (nonce string, ok bool) {
	if p := a.probe; p != nil && ref == p.ref {
		return p.nonce, true
	}
	q, err := a.n.st.NotificationByRef(ctx, a.channel, ref)
	if errors.Is(err, store.ErrNoNotification) {
		// Its send may not have returned yet: wait for the send under
		// way, whose ref is then recorded, and look again.
		lock := a.n.sendLock(a.channel)
		lock.Lock()
		lock.Unlock()
		q, err = a.n.st.NotificationByRef(ctx, a.channel, ref)
	}
	if err != nil || q.RequestID == 0 {
		return "", false
	}
	return q.Nonce, true
}

// Message returns the message whose buttons carry nonce, as sent.
func (a *Answers) Message(ctx context.Context, nonce string) (Message, bool) {
	if p := a.probe; p != nil && nonce == p.nonce {
		return p.msg, true
	}
	q, err := a.n.st.NotificationByNonce(ctx, a.channel, nonce)
	if err != nil {
		return Message{}, false
	}
	m, err := decode(q)
	return m, err == nil
}

// Refuse records an answer from who, who is not on the channel's
// allowlist, to the request whose message carries nonce.
func (a *Answers) Refuse(ctx context.Context, who, nonce string) {
	var id int64
	if q, err := a.n.st.NotificationByNonce(ctx, a.channel, nonce); err == nil {
		id = q.RequestID
	}
	if err := a.n.st.AddRefusal(ctx, store.Refusal{Channel: a.channel, Who: who, RequestID: id}); err != nil {
		a.n.log.Warn("record refusal", "err", err)
	}
	a.n.log.Warn("refused an answer from someone not on the allowlist", "channel", a.channel, "who", who, "request", id)
}

// Offset is the channel's saved place in its update stream, 0 for none.
func (a *Answers) Offset(ctx context.Context) int64 {
	v, _, _ := a.n.st.State(ctx, "notify:"+a.channel+":offset")
	var off int64
	_, _ = fmt.Sscan(v, &off)
	return off
}

// SetOffset saves the channel's place in its update stream.
func (a *Answers) SetOffset(ctx context.Context, off int64) error {
	return a.n.st.SetState(context.WithoutCancel(ctx), "notify:"+a.channel+":offset", fmt.Sprint(off))
}

// finishTimeout bounds what a listener still does for an update it has
// begun to handle once it is told to stop.
const finishTimeout = 10 * time.Second

// finishing is the context a listener handles one update under. It
// outlives ctx by up to finishTimeout, so that a tap the store recorded
// is also acknowledged to the person and shown on its message when the
// listener is told to stop meanwhile (ralph notify test stops it as soon
// as the tap is recorded).
func finishing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
}

// Logger is the notifier's logger, for channels.
func (a *Answers) Logger() *slog.Logger { return a.n.log.With("channel", a.channel) }

// wants is the channels subscribed to event.
func (n *Notifier) wants(event string) []Channel {
	var out []Channel
	for _, ch := range n.opt.Channels {
		if ch.Wants(event) {
			out = append(out, ch)
		}
	}
	return out
}

// trim cuts s to at most n runes, marking the cut.
func trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// firstLine is s's first line.
func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// wantsEvents adapts a channel's events setting.
type wantsEvents []string

func (w wantsEvents) Wants(event string) bool { return config.Wants(w, event) }

// probe is the test message a two-way channel's tap answers in Test.
type probe struct {
	nonce string
	msg   Message
	ref   string
	got   chan store.HumanRequest
}

// Test sends a test message through each channel (only the one named
// only, when set) and, for the two-way ones, waits up to wait for a tap
// on its Approve button, saying what happened on w. It fails when a
// channel could not send or no tap came.
func (n *Notifier) Test(ctx context.Context, only string, wait time.Duration, w io.Writer) error {
	var failed []string
	tested := 0
	for _, ch := range n.opt.Channels {
		if only != "" && ch.Name() != only {
			continue
		}
		tested++
		m := Message{Event: "test", Workspace: n.opt.Workspace, URL: n.opt.DashboardURL, Title: "ralph notify test: this channel works."}
		l, twoWay := ch.(Listener)
		var p *probe
		if twoWay {
			p = &probe{nonce: newNonce(), got: make(chan store.HumanRequest, 1)}
			m.Request = &Request{Type: "confirmation", Prompt: "ralph notify test: tap Approve to prove the round trip.", Nonce: p.nonce}
			p.msg = m
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ref, err := ch.Send(sctx, m)
		cancel()
		if err != nil {
			fmt.Fprintf(w, "%s: not sent: %s\n", ch.Name(), n.opt.Scrub.String(plainError(err)))
			failed = append(failed, ch.Name())
			continue
		}
		fmt.Fprintf(w, "%s: sent\n", ch.Name())
		if !twoWay {
			continue
		}
		p.ref = ref
		fmt.Fprintf(w, "%s: waiting up to %s for a tap on Approve…\n", ch.Name(), wait)
		lctx, lcancel := context.WithTimeout(ctx, wait)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for lctx.Err() == nil {
				_ = l.Listen(lctx, &Answers{n: n, channel: ch.Name(), probe: p})
				select {
				case <-lctx.Done():
				case <-time.After(time.Second):
				}
			}
		}()
		select {
		case req := <-p.got:
			button := "Approve"
			if req.Rejected() {
				button = "Reject"
			}
			fmt.Fprintf(w, "%s: %s tapped by %s: the round trip works\n", ch.Name(), button, req.AnsweredBy)
		case <-lctx.Done():
			fmt.Fprintf(w, "%s: no tap within %s\n", ch.Name(), wait)
			failed = append(failed, ch.Name())
		}
		// The listener finishes the tap it is handling, answering it and
		// showing the answer on the message, before it returns.
		lcancel()
		<-done
	}
	if tested == 0 {
		return fmt.Errorf("no [notify] channel named %q is configured", only)
	}
	if len(failed) > 0 {
		return fmt.Errorf("notify test failed for %s", strings.Join(failed, ", "))
	}
	return nil
}

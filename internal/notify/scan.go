package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/store"
)

// eventKinds maps the harness's event kinds to the notification events.
var eventKinds = map[string]string{
	"end":            config.EventEnd,
	"stall":          config.EventStall,
	"gates-failed":   config.EventGates,
	"fallback":       config.EventFallback,
	store.KindTamper: config.EventTamper,
}

// gateStreakText finds the streak in a gates-failed event's text:
// "… (2 of 5 attempts)".
var gateStreakText = regexp.MustCompile(`\((\d+) of \d+ attempts\)`)

// gateStreak is the number of gate failures in a row a gates-failed
// event reports, 0 when it says none.
func gateStreak(text string) int {
	m := gateStreakText.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	k, _ := strconv.Atoi(m[1])
	return k
}

// costSteps are the shares of max_cost that send a message.
var costSteps = []int{50, 80, 100}

// scan looks at the store once and queues what is new: pending human
// requests, the harness's events since the cursor, cost steps reached;
// and it shows answers on the messages that asked.
func (n *Notifier) scan(ctx context.Context) {
	if err := n.scanHumans(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("look for human requests", "err", err)
	}
	if err := n.scanEvents(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("look for events", "err", err)
	}
	if err := n.scanCost(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("look at the cost", "err", err)
	}
	n.scanAnswered(ctx)
}

func (n *Notifier) scanHumans(ctx context.Context) error {
	chans := n.wants(config.EventHuman)
	if len(chans) == 0 {
		return nil
	}
	reqs, err := n.st.PendingHumanRequests(ctx)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		key := "human:" + strconv.FormatInt(r.ID, 10)
		for _, ch := range chans {
			if ok, err := n.st.HasNotification(ctx, ch.Name(), key); err != nil || ok {
				continue
			}
			m := n.humanMessage(ctx, r)
			m.Request.Nonce = newNonce()
			if err := n.enqueue(ctx, ch, key, m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (n *Notifier) humanMessage(ctx context.Context, r store.HumanRequest) Message {
	m := Message{Event: config.EventHuman, Workspace: n.opt.Workspace, URL: n.opt.DashboardURL,
		Request: &Request{ID: r.ID, Type: r.Type, Prompt: n.opt.Scrub.String(trim(r.Prompt, 3000)), Options: r.Options, TimeoutAt: r.TimeoutAt}}
	if t, ok := n.task(ctx, r.TaskID); ok {
		m.Task = t.Number
	}
	m.Title = "Waiting for a human: " + firstLine(m.Request.Prompt)
	return m
}

func (n *Notifier) scanEvents(ctx context.Context) error {
	var kinds []string
	for kind, event := range eventKinds {
		if len(n.wants(event)) > 0 {
			kinds = append(kinds, kind)
		}
	}
	v, _, err := n.st.State(ctx, keyCursor)
	if err != nil {
		return err
	}
	cursor, _ := strconv.ParseInt(v, 10, 64)
	evs, err := n.st.HarnessEventsAfter(ctx, cursor, kinds, 100)
	if err != nil || len(evs) == 0 {
		return err
	}
	for _, e := range evs {
		if e.Kind == "gates-failed" && gateStreak(e.Text) < 2 {
			continue // one failure is the loop at work; a streak is news
		}
		m := n.eventMessage(ctx, e)
		key := "event:" + strconv.FormatInt(e.ID, 10)
		for _, ch := range n.wants(m.Event) {
			if err := n.enqueue(ctx, ch, key, m); err != nil {
				return err
			}
		}
	}
	return n.st.SetState(ctx, keyCursor, strconv.FormatInt(evs[len(evs)-1].ID, 10))
}

func (n *Notifier) eventMessage(ctx context.Context, e store.Event) Message {
	m := Message{Event: eventKinds[e.Kind], Workspace: n.opt.Workspace, URL: n.opt.DashboardURL, Text: n.opt.Scrub.String(trim(e.Text, 1500))}
	t, ok := n.task(ctx, e.TaskID)
	if ok {
		m.Task = t.Number
	}
	switch m.Event {
	case config.EventEnd:
		// The task row was ended before the event was written.
		if t, err := n.st.GetTask(ctx, e.TaskID); err == nil {
			m.Reason, m.CostUSD = t.Reason, t.CostUSD
			_, detail, _ := strings.Cut(e.Text, ": ")
			m.Text = n.opt.Scrub.String(trim(detail, 1500))
		}
		if m.Reason == "" {
			m.Reason, _, _ = strings.Cut(e.Text, ":")
		}
		m.ExitCode = engine.Reason(m.Reason).ExitCode()
		m.Iterations = e.Iteration
		m.Title = fmt.Sprintf("Run ended: %s (exit %d) after %s, $%.2f", m.Reason, m.ExitCode, plural(m.Iterations, "iteration"), m.CostUSD)
	case config.EventStall:
		m.Title = "Stall: " + firstLine(m.Text)
	case config.EventGates:
		m.Title = fmt.Sprintf("Gate failures: %d in a row: %s", gateStreak(e.Text), firstLine(m.Text))
	case config.EventFallback:
		m.Title = "Agent fallback: " + firstLine(m.Text)
	case config.EventTamper:
		m.Title = "Guard: " + firstLine(m.Text)
	}
	m.Title = trim(m.Title, 200)
	return m
}

func (n *Notifier) scanCost(ctx context.Context) error {
	if n.opt.MaxCost <= 0 || len(n.wants(config.EventCost)) == 0 {
		return nil
	}
	t, err := n.st.LatestTask(ctx)
	if err != nil || t.Status != store.TaskRunning {
		return nil
	}
	for i := len(costSteps) - 1; i >= 0; i-- {
		pct := costSteps[i]
		if t.CostUSD < n.opt.MaxCost*float64(pct)/100 {
			continue
		}
		// Only the highest step reached is told: a task that is found
		// at 90% gets the 80% message, not the 50% one as well.
		key := fmt.Sprintf("cost:%d:%d", t.ID, pct)
		m := Message{Event: config.EventCost, Workspace: n.opt.Workspace, Task: t.Number, URL: n.opt.DashboardURL, CostUSD: t.CostUSD,
			Title: fmt.Sprintf("Cost at %d%% of max_cost: $%.2f of $%.2f", pct, t.CostUSD, n.opt.MaxCost)}
		for _, ch := range n.wants(config.EventCost) {
			done := false
			for _, higher := range costSteps[i:] {
				if ok, _ := n.st.HasNotification(ctx, ch.Name(), fmt.Sprintf("cost:%d:%d", t.ID, higher)); ok {
					done = true
				}
			}
			if done {
				continue
			}
			if err := n.enqueue(ctx, ch, key, m); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// scanAnswered shows the answer on each sent message whose request was
// answered elsewhere (the CLI, the dashboard, another channel, a
// timeout), on the channels that can.
func (n *Notifier) scanAnswered(ctx context.Context) {
	for _, ch := range n.opt.Channels {
		up, ok := ch.(Updater)
		if !ok {
			continue
		}
		sent, err := n.st.Notifications(ctx, ch.Name(), store.OutboxSent)
		if err != nil {
			return
		}
		for _, q := range sent {
			if q.RequestID == 0 {
				continue
			}
			req, err := n.st.HumanRequestByID(ctx, q.RequestID)
			if err != nil || req.Status == store.HumanPending {
				continue
			}
			m, err := decode(q)
			if err != nil {
				continue
			}
			uctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err = up.Update(uctx, q.Ref, m, req)
			cancel()
			if err != nil && !permanent(err) {
				// An outage: tried again next time; the sender warns of it.
				n.log.Debug("show the answer on the message", "channel", ch.Name(), "err", n.opt.Scrub.String(plainError(err)))
				continue
			}
			if err != nil {
				n.log.Info("the message cannot show the answer", "channel", ch.Name(), "err", n.opt.Scrub.String(plainError(err)))
			}
			_ = n.st.CloseNotification(ctx, q.ID)
		}
	}
}

// enqueue puts m in ch's outbox under key, once.
func (n *Notifier) enqueue(ctx context.Context, ch Channel, key string, m Message) error {
	body, err := json.Marshal(stored{Message: m, Nonce: nonceOf(m)})
	if err != nil {
		return err
	}
	q := store.Notification{Channel: ch.Name(), Key: key, Body: string(body), Nonce: nonceOf(m)}
	if m.Request != nil {
		q.RequestID = m.Request.ID
	}
	_, err = n.st.EnqueueNotification(ctx, q)
	return err
}

// stored is a message as the outbox keeps it: with its nonce, which the
// message's JSON never shows.
type stored struct {
	Message
	Nonce string `json:"nonce,omitempty"`
}

func nonceOf(m Message) string {
	if m.Request == nil {
		return ""
	}
	return m.Request.Nonce
}

func decode(q store.Notification) (Message, error) {
	var s stored
	if err := json.Unmarshal([]byte(q.Body), &s); err != nil {
		return Message{}, fmt.Errorf("notification %d: %w", q.ID, err)
	}
	if s.Request != nil {
		s.Request.Nonce = s.Nonce
	}
	return s.Message, nil
}

// task returns the task with id, cached.
func (n *Notifier) task(ctx context.Context, id int64) (store.Task, bool) {
	if id == 0 {
		return store.Task{}, false
	}
	if t, ok := n.tasks[id]; ok {
		return t, true
	}
	t, err := n.st.GetTask(ctx, id)
	if err != nil {
		return store.Task{}, false
	}
	n.tasks[id] = t
	return t, true
}

func plural(k int, noun string) string {
	if k == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", k, noun)
}

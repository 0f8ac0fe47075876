package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Outbox statuses: a notification is queued until a channel took it,
// sent after, and closed once the request it asks was answered and the
// message says so.
const (
	OutboxQueued = "queued"
	OutboxSent   = "sent"
	OutboxClosed = "closed"
)

// ErrNoNotification means no notification carries that nonce.
var ErrNoNotification = errors.New("no such notification")

// Notification is one row of notify_outbox: one message to one channel,
// kept so that a restart resends nothing already sent and loses nothing
// not yet sent.
type Notification struct {
	ID      int64
	Channel string
	// Key says what the message is about (human:ID, event:ID,
	// cost:TASK:PCT); a channel gets one message per key.
	Key       string
	RequestID int64
	// Nonce is the unguessable token the message's buttons carry.
	Nonce     string
	Body      string
	Status    string
	Attempts  int
	NextAt    time.Time
	Ref       string
	LastError string
	CreatedAt time.Time
	SentAt    time.Time
}

const outboxColumns = `id, channel, key, request_id, nonce, body, status, attempts, next_at, ref, last_error, created_at, sent_at`

func scanNotification(row interface{ Scan(...any) error }) (Notification, error) {
	var n Notification
	var next, created, sent sql.NullString
	if err := row.Scan(&n.ID, &n.Channel, &n.Key, &n.RequestID, &n.Nonce, &n.Body, &n.Status, &n.Attempts,
		&next, &n.Ref, &n.LastError, &created, &sent); err != nil {
		return Notification{}, err
	}
	n.NextAt, n.CreatedAt, n.SentAt = parseTime(next), parseTime(created), parseTime(sent)
	return n, nil
}

// EnqueueNotification queues n unless its channel already has one with
// its key; added says whether it was queued.
func (s *Store) EnqueueNotification(ctx context.Context, n Notification) (added bool, err error) {
	res, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO notify_outbox
		(channel, key, request_id, nonce, body, status, next_at, created_at) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?)`,
		n.Channel, n.Key, n.RequestID, n.Nonce, n.Body, s.stamp(), s.stamp())
	if err != nil {
		return false, fmt.Errorf("queue notification %s: %w", n.Key, err)
	}
	k, err := res.RowsAffected()
	return k > 0, err
}

// HasNotification reports whether channel has a message with key.
func (s *Store) HasNotification(ctx context.Context, channel, key string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM notify_outbox WHERE channel = ? AND key = ?`, channel, key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read notification %s: %w", key, err)
	}
	return true, nil
}

// Notifications returns channel's messages in status, oldest first.
func (s *Store) Notifications(ctx context.Context, channel, status string) ([]Notification, error) {
	return queryAll(ctx, s.db, "list notifications", scanNotification, `SELECT `+outboxColumns+` FROM notify_outbox WHERE channel = ? AND status = ? ORDER BY id`, channel, status)
}

// NotificationByNonce returns the message of channel whose buttons carry
// nonce; ErrNoNotification when there is none.
func (s *Store) NotificationByNonce(ctx context.Context, channel, nonce string) (Notification, error) {
	n, err := scanNotification(s.db.QueryRowContext(ctx, `SELECT `+outboxColumns+` FROM notify_outbox
		WHERE channel = ? AND nonce = ? AND nonce != ''`, channel, nonce))
	if errors.Is(err, sql.ErrNoRows) {
		return Notification{}, ErrNoNotification
	}
	if err != nil {
		return Notification{}, fmt.Errorf("read notification: %w", err)
	}
	return n, nil
}

// NotificationByRef returns channel's message the channel calls ref;
// ErrNoNotification when there is none.
func (s *Store) NotificationByRef(ctx context.Context, channel, ref string) (Notification, error) {
	n, err := scanNotification(s.db.QueryRowContext(ctx, `SELECT `+outboxColumns+` FROM notify_outbox
		WHERE channel = ? AND ref = ? AND ref != '' ORDER BY id DESC LIMIT 1`, channel, ref))
	if errors.Is(err, sql.ErrNoRows) {
		return Notification{}, ErrNoNotification
	}
	if err != nil {
		return Notification{}, fmt.Errorf("read notification: %w", err)
	}
	return n, nil
}

// MarkNotificationSent records that the channel took message id and
// calls it ref.
func (s *Store) MarkNotificationSent(ctx context.Context, id int64, ref string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE notify_outbox SET status = 'sent', ref = ?, attempts = attempts + 1,
		last_error = '', sent_at = ? WHERE id = ?`, ref, s.stamp(), id)
	if err != nil {
		return fmt.Errorf("mark notification %d sent: %w", id, err)
	}
	return nil
}

// RetryNotification records a failed attempt at message id and when to
// try again.
func (s *Store) RetryNotification(ctx context.Context, id int64, next time.Time, cause string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE notify_outbox SET attempts = attempts + 1, next_at = ?, last_error = ? WHERE id = ?`,
		next.UTC().Format(time.RFC3339Nano), cause, id)
	if err != nil {
		return fmt.Errorf("retry notification %d: %w", id, err)
	}
	return nil
}

// CloseNotification records that message id now shows its request's
// answer.
func (s *Store) CloseNotification(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE notify_outbox SET status = 'closed' WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("close notification %d: %w", id, err)
	}
	return nil
}

// Refusal is an answer a channel refused: someone not on its allowlist.
type Refusal struct {
	Channel   string
	Who       string
	RequestID int64
	At        time.Time
}

// AddRefusal records a refused answer.
func (s *Store) AddRefusal(ctx context.Context, r Refusal) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO notify_refusals (channel, who, request_id, at) VALUES (?, ?, ?, ?)`,
		r.Channel, r.Who, r.RequestID, s.stamp())
	if err != nil {
		return fmt.Errorf("record refusal: %w", err)
	}
	return nil
}

// Refusals returns the refused answers, oldest first.
func (s *Store) Refusals(ctx context.Context) ([]Refusal, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT channel, who, request_id, at FROM notify_refusals ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list refusals: %w", err)
	}
	defer rows.Close()
	var out []Refusal
	for rows.Next() {
		var r Refusal
		var at sql.NullString
		if err := rows.Scan(&r.Channel, &r.Who, &r.RequestID, &at); err != nil {
			return nil, fmt.Errorf("list refusals: %w", err)
		}
		r.At = parseTime(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// HarnessEventsAfter returns the harness's events of the given kinds
// with ids above after, oldest first, at most limit of them: what the
// notifier tells people about.
func (s *Store) HarnessEventsAfter(ctx context.Context, after int64, kinds []string, limit int) ([]Event, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	q := `SELECT ` + eventColumns + ` FROM events
		WHERE id > ? AND source = ? AND kind IN (?` + repeatPlaceholders(len(kinds)-1) + `) ORDER BY id LIMIT ?`
	args := []any{after, SourceHarness}
	for _, k := range kinds {
		args = append(args, k)
	}
	args = append(args, limit)
	out, err := s.queryEvents(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list harness events: %w", err)
	}
	return out, nil
}

// LastEventID is the newest event's id, 0 when there is none.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(id) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("read last event: %w", err)
	}
	return id.Int64, nil
}

func repeatPlaceholders(n int) string {
	b := make([]byte, 0, 3*n)
	for range n {
		b = append(b, ", ?"...)
	}
	return string(b)
}

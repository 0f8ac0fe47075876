package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Human interaction types.
const (
	HumanConfirmation = "confirmation"
	HumanText         = "text"
	HumanSelect       = "select"
)

// Human interaction statuses. A timeout counts as a rejection.
const (
	HumanPending  = "pending"
	HumanApproved = "approved"
	HumanRejected = "rejected"
	HumanTimeout  = "timeout"
)

// ErrNoHumanRequest means no human request with that id exists in this
// workspace's database.
var ErrNoHumanRequest = errors.New("no such human request")

// NotPendingError means a human request was already resolved.
type NotPendingError struct {
	Request HumanRequest
}

func (e *NotPendingError) Error() string {
	r := e.Request
	verdict := "was " + r.Status
	if r.Status == HumanTimeout {
		verdict = "timed out"
	}
	s := fmt.Sprintf("request %d is not pending: it %s", r.ID, verdict)
	if r.AnsweredVia != "" && r.Status != HumanTimeout {
		if r.AnsweredBy != "" {
			s += " by " + r.AnsweredBy
		}
		s += " via " + r.AnsweredVia
	}
	if !r.ResolvedAt.IsZero() {
		s += " at " + r.ResolvedAt.Local().Format(time.DateTime)
	}
	return s
}

// HumanRequest is one row of human_interactions: a question the run asks a
// person, and the answer.
type HumanRequest struct {
	ID     int64 `json:"id"`
	TaskID int64 `json:"task_id"`
	// StepKey names the plan node that asked, so a resumed run waits on
	// the request it made before instead of asking again.
	StepKey    string    `json:"step_key,omitempty"`
	Type       string    `json:"type"`
	Prompt     string    `json:"prompt"`
	Options    []string  `json:"options,omitempty"`
	Status     string    `json:"status"`
	Response   string    `json:"response,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	TimeoutAt  time.Time `json:"timeout_at,omitzero"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	// AnsweredVia names what answered: cli, dashboard, temporal, a
	// notification channel (telegram, slack), or timeout; empty while
	// pending and for answers recorded before it was kept.
	AnsweredVia string `json:"answered_via,omitempty"`
	// AnsweredBy is who answered, as the channel names them.
	AnsweredBy string `json:"answered_by,omitempty"`
}

// Answerer says who answers a request and through what.
type Answerer struct {
	Via string
	By  string
}

// Decision says how r was resolved and by whom, for messages:
// "approved by @ann (telegram) at 2026-11-26 01:02:03".
func (r HumanRequest) Decision() string {
	s := r.Status
	if r.Status == HumanTimeout {
		s = "timed out"
	}
	switch {
	case r.AnsweredBy != "" && r.AnsweredVia != "":
		s += " by " + r.AnsweredBy + " (" + r.AnsweredVia + ")"
	case r.AnsweredVia != "" && r.Status != HumanTimeout:
		s += " via " + r.AnsweredVia
	}
	if r.Response != "" {
		s += ": " + r.Response
	}
	if !r.ResolvedAt.IsZero() {
		s += " at " + r.ResolvedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return s
}

// Rejected reports whether the answer was no: a rejection or a timeout.
func (r HumanRequest) Rejected() bool {
	return r.Status == HumanRejected || r.Status == HumanTimeout
}

// AnswerError means an approval lacks the response its request needs: a
// text request's text, or one of a select request's options.
type AnswerError struct {
	Request HumanRequest
}

func (e *AnswerError) Error() string {
	if len(e.Request.Options) > 0 {
		return fmt.Sprintf("request %d asks to choose one of %s: approve it with a response naming one", e.Request.ID, strings.Join(e.Request.Options, ", "))
	}
	return fmt.Sprintf("request %d asks for text: approve it with a response", e.Request.ID)
}

// CheckAnswer returns an *AnswerError when approving r with response
// would be refused: approving a text request needs a response, and
// approving a select request needs a response naming one of its options.
// It does not check that r is still pending (ResolveHuman does).
func (r HumanRequest) CheckAnswer(status, response string) error {
	if status != HumanApproved || r.Status != HumanPending {
		return nil
	}
	if (r.Type == HumanText && response == "") ||
		(r.Type == HumanSelect && len(r.Options) > 0 && !slices.Contains(r.Options, response)) {
		return &AnswerError{Request: r}
	}
	return nil
}

const humanColumns = `id, task_id, step_key, type, prompt, options, status, response, created_at, timeout_at, resolved_at, answered_via, answered_by`

func scanHuman(row interface{ Scan(...any) error }) (HumanRequest, error) {
	var r HumanRequest
	var options string
	var created, timeout, resolved sql.NullString
	if err := row.Scan(&r.ID, &r.TaskID, &r.StepKey, &r.Type, &r.Prompt, &options, &r.Status, &r.Response,
		&created, &timeout, &resolved, &r.AnsweredVia, &r.AnsweredBy); err != nil {
		return HumanRequest{}, err
	}
	if options != "" {
		_ = json.Unmarshal([]byte(options), &r.Options)
	}
	r.CreatedAt, r.TimeoutAt, r.ResolvedAt = parseTime(created), parseTime(timeout), parseTime(resolved)
	return r, nil
}

// RequestHuman records a new pending request and returns it with its id.
// When a request for the same task and step key is still pending, it
// returns that one instead, so a request is never asked twice.
func (s *Store) RequestHuman(ctx context.Context, r HumanRequest) (HumanRequest, error) {
	if r.Type == "" {
		r.Type = HumanConfirmation
	}
	var out HumanRequest
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if r.StepKey != "" {
			got, err := scanHuman(tx.QueryRowContext(ctx, `SELECT `+humanColumns+` FROM human_interactions
				WHERE task_id = ? AND step_key = ? AND status = 'pending' ORDER BY id DESC LIMIT 1`, r.TaskID, r.StepKey))
			if err == nil {
				out = got
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		options := ""
		if len(r.Options) > 0 {
			b, err := json.Marshal(r.Options)
			if err != nil {
				return err
			}
			options = string(b)
		}
		var timeout any
		if !r.TimeoutAt.IsZero() {
			timeout = r.TimeoutAt.UTC().Format(time.RFC3339Nano)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO human_interactions
			(task_id, step_key, type, prompt, options, status, created_at, timeout_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
			r.TaskID, r.StepKey, r.Type, r.Prompt, options, s.stamp(), timeout)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		out, err = scanHuman(tx.QueryRowContext(ctx, `SELECT `+humanColumns+` FROM human_interactions WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return HumanRequest{}, fmt.Errorf("request human: %w", err)
	}
	return out, nil
}

// HumanRequestByID returns one request; ErrNoHumanRequest when there is
// none with that id.
func (s *Store) HumanRequestByID(ctx context.Context, id int64) (HumanRequest, error) {
	r, err := scanHuman(s.db.QueryRowContext(ctx, `SELECT `+humanColumns+` FROM human_interactions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return HumanRequest{}, ErrNoHumanRequest
	}
	if err != nil {
		return HumanRequest{}, fmt.Errorf("read human request %d: %w", id, err)
	}
	return r, nil
}

// LatestHumanRequest returns the newest request a task made for a step
// key; ok is false when it made none.
func (s *Store) LatestHumanRequest(ctx context.Context, taskID int64, stepKey string) (r HumanRequest, ok bool, err error) {
	r, err = scanHuman(s.db.QueryRowContext(ctx, `SELECT `+humanColumns+` FROM human_interactions
		WHERE task_id = ? AND step_key = ? ORDER BY id DESC LIMIT 1`, taskID, stepKey))
	if errors.Is(err, sql.ErrNoRows) {
		return HumanRequest{}, false, nil
	}
	if err != nil {
		return HumanRequest{}, false, fmt.Errorf("read human request: %w", err)
	}
	return r, true, nil
}

// PendingHumanRequests returns the open requests, oldest first.
func (s *Store) PendingHumanRequests(ctx context.Context) ([]HumanRequest, error) {
	return s.humanRequests(ctx, `WHERE status = 'pending' ORDER BY id`)
}

// HumanRequests returns a task's requests, oldest first.
func (s *Store) HumanRequests(ctx context.Context, taskID int64) ([]HumanRequest, error) {
	return s.humanRequests(ctx, `WHERE task_id = ? ORDER BY id`, taskID)
}

func (s *Store) humanRequests(ctx context.Context, where string, args ...any) ([]HumanRequest, error) {
	return queryAll(ctx, s.db, "list human requests", scanHuman, `SELECT `+humanColumns+` FROM human_interactions `+where, args...)
}

// ResolveHuman answers a pending request with status (approved, rejected
// or timeout) and an optional response, and returns it resolved. It fails
// with ErrNoHumanRequest for an unknown id and with a *NotPendingError
// when the request was already resolved; then nothing changes.
func (s *Store) ResolveHuman(ctx context.Context, id int64, status, response string) (HumanRequest, error) {
	return s.ResolveHumanAs(ctx, id, status, response, Answerer{})
}

// ResolveHumanAs is ResolveHuman recording who answered and through
// what (a timeout is recorded as answered via timeout).
func (s *Store) ResolveHumanAs(ctx context.Context, id int64, status, response string, by Answerer) (HumanRequest, error) {
	if status == HumanTimeout && by.Via == "" {
		by.Via = "timeout"
	}
	switch status {
	case HumanApproved, HumanRejected, HumanTimeout:
	default:
		return HumanRequest{}, fmt.Errorf("resolve human request %d: invalid status %q", id, status)
	}
	var out HumanRequest
	err := s.tx(ctx, func(tx *sql.Tx) error {
		r, err := scanHuman(tx.QueryRowContext(ctx, `SELECT `+humanColumns+` FROM human_interactions WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNoHumanRequest
		}
		if err != nil {
			return err
		}
		if r.Status != HumanPending {
			return &NotPendingError{Request: r}
		}
		now := s.now().UTC()
		if _, err := tx.ExecContext(ctx, `UPDATE human_interactions SET status = ?, response = ?, resolved_at = ?, answered_via = ?, answered_by = ?
			WHERE id = ? AND status = 'pending'`, status, response, now.Format(time.RFC3339Nano), by.Via, by.By, id); err != nil {
			return err
		}
		r.Status, r.Response, r.ResolvedAt, r.AnsweredVia, r.AnsweredBy = status, response, now, by.Via, by.By
		out = r
		return nil
	})
	if err != nil {
		var np *NotPendingError
		if errors.Is(err, ErrNoHumanRequest) || errors.As(err, &np) {
			return HumanRequest{}, err
		}
		return HumanRequest{}, fmt.Errorf("resolve human request %d: %w", id, err)
	}
	return out, nil
}

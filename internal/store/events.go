package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Event is one row of the event stream: something the agent did, or
// something the harness decided (source "harness").
type Event struct {
	ID        int64     `json:"id"`
	TaskID    int64     `json:"task_id"`
	Iteration int       `json:"iteration"`
	At        time.Time `json:"at"`
	Source    string    `json:"source"`
	Kind      string    `json:"kind"`
	Tool      string    `json:"tool,omitempty"`
	Text      string    `json:"text,omitempty"`
	// Data is JSON: a tool call's input, usage, a gate's fix.
	Data string `json:"data,omitempty"`
}

// Event sources.
const (
	SourceAgent   = "agent"
	SourceHarness = "harness"
)

// AddEvent appends an event to the stream.
func (s *Store) AddEvent(ctx context.Context, e Event) (int64, error) {
	if e.Source == "" {
		e.Source = SourceAgent
	}
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.TaskID, e.Iteration, s.stamp(), e.Source, e.Kind, e.Tool, e.Text, e.Data)
	if err != nil {
		return 0, fmt.Errorf("add event: %w", err)
	}
	return res.LastInsertId()
}

// EventsAfter returns up to limit events with an id above after, oldest
// first; taskID 0 means every task.
func (s *Store) EventsAfter(ctx context.Context, taskID, after int64, limit int) ([]Event, error) {
	q := `SELECT id, task_id, iteration, at, source, kind, tool, text, data FROM events WHERE id > ?`
	args := []any{after}
	if taskID != 0 {
		q += ` AND task_id = ?`
		args = append(args, taskID)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at sql.NullString
		if err := rows.Scan(&e.ID, &e.TaskID, &e.Iteration, &at, &e.Source, &e.Kind, &e.Tool, &e.Text, &e.Data); err != nil {
			return nil, err
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

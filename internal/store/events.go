package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
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

// KindTamper is the kind of the harness's events about an agent's change
// to what is not the agent's: a harness-owned file, ralph.toml, a file
// the gates depend on, the user's history. Data says what, as JSON
// ({"what": "file", ...}).
const KindTamper = "tamper"

// KindSandbox is the kind of the harness's events about an access the
// sandbox refused the agent, as a tool reported it. Data is
// {"path": ...}.
const KindSandbox = "sandbox"

// EventsAfter returns up to limit events with an id above after, oldest
// first; taskID 0 means every task.
func (s *Store) EventsAfter(ctx context.Context, taskID, after int64, limit int) ([]Event, error) {
	q := `SELECT ` + eventColumns + ` FROM events WHERE id > ?`
	args := []any{after}
	if taskID != 0 {
		q += ` AND task_id = ?`
		args = append(args, taskID)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limit)
	return s.queryEvents(ctx, q, args...)
}

// eventColumns are the columns queryEvents scans, in its order.
const eventColumns = `id, task_id, iteration, at, source, kind, tool, text, data`

// queryEvents runs q, which selects eventColumns from events, and scans
// its rows.
func (s *Store) queryEvents(ctx context.Context, q string, args ...any) ([]Event, error) {
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

// EventQuery selects a page of the event stream, newest first.
type EventQuery struct {
	// TaskID limits the page to one task; 0 means every task.
	TaskID int64
	// Before limits the page to events with a smaller id; 0 means none.
	Before int64
	// Kind limits the page to one kind ("tool_call", "gates", …).
	Kind string
	// Source limits the page to SourceAgent or SourceHarness events.
	Source string
	// Search keeps events whose text, tool or data contain it.
	Search string
	// Limit caps the page; 0 means 100.
	Limit int
}

// EventsPage returns the newest events q selects, newest first. It reads
// through the (task_id, id) index, so the first page of a long run is as
// fast as the first page of a short one.
func (s *Store) EventsPage(ctx context.Context, q EventQuery) ([]Event, error) {
	where := []string{"1 = 1"}
	var args []any
	if q.TaskID != 0 {
		where, args = append(where, "task_id = ?"), append(args, q.TaskID)
	}
	if q.Before > 0 {
		where, args = append(where, "id < ?"), append(args, q.Before)
	}
	if q.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, q.Kind)
	}
	if q.Source != "" {
		where, args = append(where, "source = ?"), append(args, q.Source)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	sel, filters := `SELECT `+eventColumns+` FROM events WHERE `, strings.Join(where, " AND ")
	like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q.Search) + "%"
	const scan = `(text LIKE ? ESCAPE '\' OR tool LIKE ? ESCAPE '\' OR data LIKE ? ESCAPE '\')`
	query := sel + filters
	switch {
	case utf8.RuneCountInString(q.Search) >= 3:
		// The trigram index finds every substring of three characters
		// or more, as LIKE does (case-insensitively for ASCII). The
		// events committed since it last caught up (ftsindex.go) are
		// read instead: two selects, each through its own index.
		match := `"` + strings.ReplaceAll(q.Search, `"`, `""`) + `"`
		query += ` AND id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ?)` +
			` UNION ALL ` + sel + filters + ` AND id > (SELECT indexed FROM events_fts_done) AND ` + scan
		args = append(append(append(slices.Clip(args), match), args...), like, like, like)
	case q.Search != "":
		query += ` AND ` + scan
		args = append(args, like, like, like)
	}
	args = append(args, limit)
	out, err := s.queryEvents(ctx, query+` ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// EventKinds returns the distinct kinds among a task's newest recent
// events (every task's when taskID is 0), sorted. Looking only at the
// newest keeps it fast on a run of any length.
func (s *Store) EventKinds(ctx context.Context, taskID int64, recent int) ([]string, error) {
	q, args := `SELECT DISTINCT kind FROM (SELECT kind FROM events ORDER BY id DESC LIMIT ?) ORDER BY kind`, []any{recent}
	if taskID != 0 {
		q, args = `SELECT DISTINCT kind FROM (SELECT kind FROM events WHERE task_id = ? ORDER BY id DESC LIMIT ?) ORDER BY kind`, []any{taskID, recent}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read event kinds: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("read event kinds: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// DataVersion returns SQLite's data_version for the store's connection: it
// changes whenever another connection (another process) commits, so
// polling it is a cheap way to notice a running loop's writes.
func (s *Store) DataVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read data_version: %w", err)
	}
	return v, nil
}

// CountEvents counts a task's events of one kind.
func (s *Store) CountEvents(ctx context.Context, taskID int64, kind string) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE task_id = ? AND kind = ?`, taskID, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s events: %w", kind, err)
	}
	return n, nil
}

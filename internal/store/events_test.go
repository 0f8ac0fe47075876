package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedEvents writes n events to one task in one transaction.
func seedEvents(t testing.TB, s *Store, n int) int64 {
	t.Helper()
	ctx := context.Background()
	task, err := s.CreateTask(ctx, 1, "search", "feature", "script")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range n {
		text := fmt.Sprintf("thinking about step %d of the plan", i)
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, 1, ?, 'agent', 'text', 'shell', ?, ?)`,
			task, at, text, fmt.Sprintf(`{"argv":["go","test","./pkg%d/..."]}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// A past run's events: the search index holds them.
	if err := s.IndexEvents(ctx); err != nil {
		t.Fatal(err)
	}
	return task
}

func TestEventSearchUsesTheIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seedEvents(t, s, 300)
	_, _ = s.AddEvent(ctx, Event{TaskID: 1, Kind: "text", Text: `He said "Ship IT" at 100%_done`})
	for _, tc := range []struct {
		search string
		want   int
	}{
		{"pkg29", 11},    // pkg29, pkg290…pkg299
		{"PKG29", 11},    // any case
		{"step 7 ", 1},   // spaces are part of the text
		{`"ship it"`, 1}, // quotes are text
		{"100%_d", 1},    // so are LIKE's wildcards
		{"7 ", 30},       // two characters: no index, same answer
		{"nowhere", 0},
	} {
		evs, err := s.EventsPage(ctx, EventQuery{Search: tc.search, Limit: 1000})
		if err != nil {
			t.Fatalf("search %q: %v", tc.search, err)
		}
		if len(evs) != tc.want {
			t.Errorf("search %q found %d events, want %d", tc.search, len(evs), tc.want)
		}
	}
	// The search reads the full-text index, not the whole table.
	rows, err := s.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT id FROM events WHERE id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH '"pkg29"') ORDER BY id DESC LIMIT 200`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		_ = rows.Scan(&id, &parent, &unused, &detail)
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "VIRTUAL TABLE INDEX") {
		t.Errorf("the search does not use the full-text index: %s", p)
	}
	// Later writes reach the index.
	_, _ = s.AddEvent(ctx, Event{TaskID: 1, Kind: "text", Text: "a brand new zebra"})
	if evs, _ := s.EventsPage(ctx, EventQuery{Search: "zebra"}); len(evs) != 1 {
		t.Errorf("a new event is not found: %d", len(evs))
	}
}

// Events enter the search index after they are committed, in batches: a
// search finds them before (read from the table) and after (from the
// index), the index catches up by itself and when the store closes, and
// it stays whole when events in it and not yet in it are changed or
// deleted.
func TestSearchIndexCatchesUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	task := seedEvents(t, s, 50)
	indexed := func(s *Store, word string) int {
		t.Helper()
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM events_fts WHERE events_fts MATCH ?`, `"`+word+`"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	whole := func(s *Store) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO events_fts (events_fts) VALUES ('integrity-check')`); err != nil {
			t.Errorf("the search index is not whole: %v", err)
		}
	}
	s.QueueEvent(Event{TaskID: task, Kind: "text", Text: "a brand new zebra"})
	if err := s.FlushEvents(); err != nil {
		t.Fatal(err)
	}
	if evs, _ := s.EventsPage(ctx, EventQuery{Search: "zebra"}); len(evs) != 1 {
		t.Errorf("an event not yet indexed is not found: %d", len(evs))
	}
	if n := indexed(s, "zebra"); n != 0 {
		t.Errorf("the event entered the index with its commit (%d): it is to wait", n)
	}
	deadline := time.Now().Add(10 * indexDelay)
	for indexed(s, "zebra") == 0 && time.Now().Before(deadline) {
		time.Sleep(indexDelay / 10)
	}
	if n := indexed(s, "zebra"); n != 1 {
		t.Fatalf("the index did not catch up by itself: %d", n)
	}
	if evs, _ := s.EventsPage(ctx, EventQuery{Search: "zebra"}); len(evs) != 1 {
		t.Errorf("an indexed event is found %d times, want once", len(evs))
	}
	// One event not yet indexed, then changes to both kinds.
	id, err := s.AddEvent(ctx, Event{TaskID: task, Kind: "text", Text: "an okapi"})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE events SET text = 'a giraffe' WHERE text = 'a brand new zebra'`,
		`DELETE FROM events WHERE text LIKE 'thinking about step 1 %'`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE events SET text = 'an antelope' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	whole(s)
	// Close indexes what is left; a reopened store finds it in the index.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	whole(s)
	// Closed, the index holds every event: checked against the table.
	if err := s.CheckSearchIndex(ctx); err != nil {
		t.Errorf("the index does not hold every event after Close: %v", err)
	}
	for word, want := range map[string]int{"antelope": 1, "okapi": 0, "giraffe": 1, "zebra": 0} {
		if n := indexed(s, word); n != want {
			t.Errorf("%s is in the index %d times, want %d", word, n, want)
		}
		if evs, _ := s.EventsPage(ctx, EventQuery{Search: word}); len(evs) != want {
			t.Errorf("search %s found %d events, want %d", word, len(evs), want)
		}
	}
}

// Events a process committed and was killed before indexing are indexed
// by the next store to close, though it committed none itself.
func TestCloseIndexesWhatAKilledProcessLeft(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	task := seedEvents(t, s, 3)
	// As the killed process left them: committed, not indexed.
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, 1, 'x', 'agent', 'text', '', 'left by the killed one', '')`, task); err != nil {
		t.Fatal(err)
	}
	s.DB().Close()                 // no Close: no catch-up
	reader, err := Open(ctx, path) // ralph status, say
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckSearchIndex(ctx); err != nil {
		t.Errorf("the index lacks what the killed process committed: %v", err)
	}
}

// BenchmarkEventSearch searches 100,000 events. Target: < 50 ms.
func BenchmarkEventSearch(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "ralph.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	seedEvents(b, s, 100_000)
	for b.Loop() {
		if _, err := s.EventsPage(ctx, EventQuery{Search: "pkg9999", Limit: 200}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/search")
}

// BenchmarkAddEvent appends events one transaction each, as a run records
// its agent's stream.
func BenchmarkAddEvent(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "ralph.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, err := s.CreateTask(ctx, 1, "bench", "fresh", "script")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.AddEvent(ctx, Event{TaskID: id, Iteration: 1, Kind: "tool_call", Tool: "Write", Text: "write a file", Data: `{"path":"a.go"}`}); err != nil {
			b.Fatal(err)
		}
	}
}

// The tamper count that ralph status, the dashboard and every task's end
// show reads the task's tamper events through an index, not the task's
// whole stream.
func TestCountEventsUsesAnIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT COUNT(*) FROM events WHERE task_id = ? AND kind = ?`, 1, KindTamper)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if len(plan) != 1 || !strings.Contains(plan[0], "events_task_kind") {
		t.Errorf("query plan = %q, want a search of events_task_kind", plan)
	}
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// indexDelay is how long committed events wait before they enter the
// search index, so that the events of many agent runs enter it in one
// transaction, as one segment of the index, instead of one segment a
// commit: the index was most of what writing an event cost, and in the
// gap between two agent runs. A search finds the events not yet indexed
// by reading them (EventsPage), so nothing is missed meanwhile.
const indexDelay = time.Second

// ftsIndexer schedules the search index's catch-up after events are
// committed: one run at a time, indexDelay after the first commit not
// yet indexed.
type ftsIndexer struct {
	mu      sync.Mutex
	timer   *time.Timer
	pending bool // events were committed since the last catch-up
	closed  bool
	// run serialises the catch-ups: the timer's and Close's.
	run sync.Mutex
}

// eventsCommitted notes that the writer committed events: the index
// catches up indexDelay later.
func (s *Store) eventsCommitted() {
	x := &s.fts
	x.mu.Lock()
	defer x.mu.Unlock()
	x.pending = true
	if x.timer == nil && !x.closed {
		x.timer = time.AfterFunc(indexDelay, func() {
			x.mu.Lock()
			x.timer = nil
			closed := x.closed
			x.mu.Unlock()
			if !closed {
				_ = s.catchUp(context.Background())
			}
		})
	}
}

// catchUp indexes the committed events the search index lacks, if this
// store committed any since the last catch-up.
func (s *Store) catchUp(ctx context.Context) error {
	x := &s.fts
	x.run.Lock()
	defer x.run.Unlock()
	x.mu.Lock()
	pending := x.pending
	x.pending = false
	x.mu.Unlock()
	if !pending {
		return nil
	}
	if err := s.IndexEvents(ctx); err != nil {
		x.mu.Lock()
		x.pending = true // the next commit, or Close, tries again
		x.mu.Unlock()
		return err
	}
	return nil
}

// stopIndexing ends the schedule and indexes what is left, for Close:
// what this store committed, or what a process killed before its
// catch-up left (a look at the index's mark when this store committed
// nothing).
func (s *Store) stopIndexing() error {
	x := &s.fts
	x.mu.Lock()
	x.closed = true
	if x.timer != nil {
		x.timer.Stop()
		x.timer = nil
	}
	if !x.pending {
		var behind bool
		err := s.db.QueryRowContext(context.Background(),
			`SELECT EXISTS (SELECT 1 FROM events WHERE id > (SELECT indexed FROM events_fts_done))`).Scan(&behind)
		x.pending = err == nil && behind
	}
	x.mu.Unlock()
	return s.catchUp(context.Background())
}

// IndexEvents adds every event the search index lacks to it, whichever
// process committed it (one killed before its catch-up included).
func (s *Store) IndexEvents(ctx context.Context) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO events_fts (rowid, text, tool, data)
			SELECT id, text, tool, data FROM events WHERE id > (SELECT indexed FROM events_fts_done) ORDER BY id`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE events_fts_done SET indexed = max(indexed, (SELECT COALESCE(MAX(id), 0) FROM events)) WHERE id = 1`)
		return err
	})
	if err != nil {
		return fmt.Errorf("index events: %w", err)
	}
	return nil
}

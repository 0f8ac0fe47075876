package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// maxQueued bounds the events waiting for the writer: QueueEvent waits
// while this many are queued, so an agent that prints faster than the
// disk takes it is slowed down instead of growing the queue without end.
const maxQueued = 4096

// maxErrs bounds the errors of queued events kept for FlushEvents.
const maxErrs = 10

// eventWriter commits a store's events by group commit: one goroutine at
// a time writes everything queued so far in one transaction, in the
// order it was queued, and then whatever was queued while that
// transaction committed. The first event after an idle moment starts a
// transaction at once, so a reader sees each event as soon as the disk
// takes it; a burst (an agent's stream read from a full pipe) costs a
// transaction or two instead of one an event. Ids follow the queue's
// order, and AddEvent goes through the same queue, so no event overtakes
// one queued before it.
type eventWriter struct {
	mu sync.Mutex
	// cond is broadcast when a batch is taken or committed and when the
	// writer stops.
	cond  sync.Cond
	queue []queuedEvent
	// writing is true while a goroutine drains the queue.
	writing bool
	closed  bool
	// errs are the errors of queued events since the last FlushEvents,
	// the first maxErrs of them; dropped counts the rest.
	errs    []error
	dropped int
	stats   EventStats
	// beforeBatch, when set (by tests), is called with each batch's size
	// before its transaction begins.
	beforeBatch func(n int)
}

// queuedEvent is an event waiting for the writer; res is where AddEvent
// waits for its id, nil for QueueEvent.
type queuedEvent struct {
	e   Event
	at  string
	res *addResult
}

// addResult is the outcome of one AddEvent, set when done is.
type addResult struct {
	id   int64
	err  error
	done bool
}

// EventStats counts what a store's event writer did: the events it
// committed and the transactions it took, so that a test or a benchmark
// can see the batches it formed.
type EventStats struct {
	Events  int64
	Commits int64
}

// errClosed is the error of an event added to a closed store.
var errClosed = errors.New("the store is closed")

// QueueEvent queues an event of the agent's stream to be committed as
// soon as the events before it are, with the secrets of this process's
// environment and the well-known key shapes scrubbed from it. It returns
// at once (unless maxQueued events wait already); the event's time is
// now. Errors of queued events are returned by the next FlushEvents.
func (s *Store) QueueEvent(e Event) {
	w := &s.events
	at := s.stamp()
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) >= maxQueued && !w.closed {
		w.cond.Wait()
	}
	if w.closed {
		w.fail(fmt.Errorf("add event: %w", errClosed))
		return
	}
	w.queue = append(w.queue, queuedEvent{e: e, at: at})
	s.startWriter()
}

// AddEvent appends an event to the stream, after every event queued
// before it, with the secrets of this process's environment and the
// well-known key shapes scrubbed from it. It returns once the event is
// committed; ctx does not cut the wait short, since a queued event is
// written whatever happens to its caller.
func (s *Store) AddEvent(ctx context.Context, e Event) (int64, error) {
	w := &s.events
	res := &addResult{}
	at := s.stamp()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, fmt.Errorf("add event: %w", errClosed)
	}
	w.queue = append(w.queue, queuedEvent{e: e, at: at, res: res})
	s.startWriter()
	for !res.done {
		w.cond.Wait()
	}
	return res.id, res.err
}

// FlushEvents waits until every event queued so far is committed, and
// returns the errors of the queued events that could not be, since the
// last call.
func (s *Store) FlushEvents() error {
	w := &s.events
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drained()
	err := errors.Join(w.errs...)
	if w.dropped > 0 {
		err = errors.Join(err, fmt.Errorf("add event: %d more errors", w.dropped))
	}
	w.errs, w.dropped = nil, 0
	return err
}

// EventStats returns what the store's event writer has done so far.
func (s *Store) EventStats() EventStats {
	w := &s.events
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// drained waits, with w.mu held, until the queue is empty and no batch
// is being written.
func (w *eventWriter) drained() {
	for len(w.queue) > 0 || w.writing {
		w.cond.Wait()
	}
}

// waitEvents waits until every event queued so far is committed (or has
// failed), leaving their errors to FlushEvents.
func (s *Store) waitEvents() {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	s.events.drained()
}

// closeEvents commits what is queued and refuses further events.
func (s *Store) closeEvents() {
	w := &s.events
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drained()
	w.closed = true
	w.cond.Broadcast()
}

// fail keeps err for FlushEvents; w.mu is held.
func (w *eventWriter) fail(err error) {
	if len(w.errs) < maxErrs {
		w.errs = append(w.errs, err)
	} else {
		w.dropped++
	}
}

// startWriter starts the goroutine that drains the queue unless one
// runs; s.events.mu is held.
func (s *Store) startWriter() {
	if !s.events.writing {
		s.events.writing = true
		go s.writeEvents()
	}
}

// writeEvents commits the queue batch by batch until it is empty.
func (s *Store) writeEvents() {
	w := &s.events
	w.mu.Lock()
	for len(w.queue) > 0 {
		batch := w.queue
		w.queue = nil
		hook := w.beforeBatch
		w.cond.Broadcast() // QueueEvent may wait for room
		w.mu.Unlock()
		if hook != nil {
			hook(len(batch))
		}
		ids, errs, commits := s.insertEvents(batch)
		if commits > 0 {
			s.eventsCommitted()
		}
		w.mu.Lock()
		w.stats.Commits += int64(commits)
		for i, q := range batch {
			if errs[i] == nil {
				w.stats.Events++
			}
			if q.res != nil {
				q.res.id, q.res.err, q.res.done = ids[i], errs[i], true
			} else if errs[i] != nil {
				w.fail(errs[i])
			}
		}
		w.cond.Broadcast()
	}
	w.writing = false
	w.cond.Broadcast()
	w.mu.Unlock()
}

// insertEvents writes batch in one transaction. Should that fail, each
// event is written in a transaction of its own, so that one event the
// database refuses loses no other. It returns each event's id and error
// and the transactions it committed.
func (s *Store) insertEvents(batch []queuedEvent) (ids []int64, errs []error, commits int) {
	ctx := context.Background()
	ids, errs = make([]int64, len(batch)), make([]error, len(batch))
	// Prepared before the transaction takes the store's one connection.
	stmt, err := s.insertEventStmt(ctx)
	if err == nil {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			return s.insertBatch(ctx, tx.StmtContext(ctx, stmt), batch, ids)
		})
	}
	if err == nil {
		return ids, errs, 1
	}
	if len(batch) == 1 || isBusy(err) {
		// Another process holds the database past the busy timeout: one
		// event at a time would wait as long for each.
		for i := range errs {
			errs[i] = fmt.Errorf("add event: %w", err)
		}
		return ids, errs, 0
	}
	stmt, err = s.insertEventStmt(ctx)
	for i, q := range batch {
		if err != nil {
			errs[i] = fmt.Errorf("add event: %w", err)
			continue
		}
		if ids[i], errs[i] = s.insertEvent(ctx, stmt, q); errs[i] != nil {
			errs[i] = fmt.Errorf("add event: %w", errs[i])
		} else {
			commits++
		}
	}
	return ids, errs, commits
}

// insertBatch inserts batch through stmt, setting each event's id.
func (s *Store) insertBatch(ctx context.Context, stmt *sql.Stmt, batch []queuedEvent, ids []int64) error {
	for i, q := range batch {
		id, err := s.insertEvent(ctx, stmt, q)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	return nil
}

// insertEventStmt is the prepared insert of one event.
func (s *Store) insertEventStmt(ctx context.Context) (*sql.Stmt, error) {
	return s.stmt(ctx,
		`INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
}

// insertEvent inserts q through stmt, scrubbed, and returns its id.
func (s *Store) insertEvent(ctx context.Context, stmt *sql.Stmt, q queuedEvent) (int64, error) {
	e := q.e
	if e.Source == "" {
		e.Source = SourceAgent
	}
	res, err := stmt.ExecContext(ctx, e.TaskID, e.Iteration, q.at, e.Source, e.Kind,
		s.scrub.String(e.Tool), s.scrub.String(e.Text), s.scrub.String(e.Data))
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

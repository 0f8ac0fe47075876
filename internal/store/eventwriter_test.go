package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// heldWriter opens a store with a task whose event writer stops before
// each batch's transaction until the test lets it go: the batch it was
// about to write is sent on batches, and a receive from release lets it
// continue.
type heldWriter struct {
	s       *Store
	path    string
	task    int64
	batches chan int
	release chan struct{}
}

func newHeldWriter(t *testing.T) *heldWriter {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.CreateTask(ctx, 1, "events", "fresh", "script")
	if err != nil {
		t.Fatal(err)
	}
	h := &heldWriter{s: s, path: path, task: task, batches: make(chan int), release: make(chan struct{})}
	s.events.mu.Lock()
	s.events.beforeBatch = func(n int) {
		h.batches <- n
		<-h.release
	}
	s.events.mu.Unlock()
	return h
}

// queued is how many events wait for the writer.
func (h *heldWriter) queued() int {
	h.s.events.mu.Lock()
	defer h.s.events.mu.Unlock()
	return len(h.s.events.queue)
}

// waitQueued waits until n events wait for the writer.
func (h *heldWriter) waitQueued(t *testing.T, n int) {
	t.Helper()
	for h.queued() != n {
		time.Sleep(time.Millisecond)
	}
}

// texts returns the text of every event in the store, in id order, as
// another process reads them.
func texts(t *testing.T, path string) []string {
	t.Helper()
	r, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	evs, err := r.EventsAfter(context.Background(), 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Text)
	}
	return out
}

// Events that arrive while a batch commits are committed together in the
// next transaction, in the order they came, and a harness event added
// directly takes its place after them rather than overtaking them.
func TestEventsCommitInBatchesInOrder(t *testing.T) {
	h := newHeldWriter(t)
	defer h.s.Close()
	h.s.QueueEvent(Event{TaskID: h.task, Iteration: 1, Kind: "text", Text: "a0"})
	if n := <-h.batches; n != 1 {
		t.Fatalf("first batch holds %d events, want the first alone", n)
	}
	for i := 1; i < 10; i++ {
		h.s.QueueEvent(Event{TaskID: h.task, Iteration: 1, Kind: "text", Text: fmt.Sprintf("a%d", i)})
	}
	added := make(chan int64)
	go func() {
		id, err := h.s.AddEvent(context.Background(), Event{TaskID: h.task, Iteration: 1, Source: SourceHarness, Kind: "timeout", Text: "h"})
		if err != nil {
			t.Error(err)
		}
		added <- id
	}()
	h.waitQueued(t, 10)
	h.release <- struct{}{}
	if n := <-h.batches; n != 10 {
		t.Fatalf("second batch holds %d events, want the 10 queued while the first committed", n)
	}
	h.release <- struct{}{}
	hid := <-added
	if err := h.s.FlushEvents(); err != nil {
		t.Fatal(err)
	}
	if got := h.s.EventStats(); got != (EventStats{Events: 11, Commits: 2}) {
		t.Errorf("stats = %+v, want 11 events in 2 commits", got)
	}
	want := "a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 h"
	if got := strings.Join(texts(t, h.path), " "); got != want {
		t.Errorf("events in id order: %s\nwant %s", got, want)
	}
	evs, err := h.s.EventsAfter(context.Background(), 0, hid-1, 10)
	if err != nil || len(evs) != 1 || evs[0].Text != "h" {
		t.Errorf("AddEvent's id %d reads %+v (%v), want the harness event", hid, evs, err)
	}
}

// The first event after an idle moment is committed without waiting for
// more, or for a flush: another process sees it.
func TestFirstEventCommitsAtOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	task, err := s.CreateTask(ctx, 1, "events", "fresh", "script")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range 3 {
		s.QueueEvent(Event{TaskID: task, Iteration: 1, Kind: "text", Text: fmt.Sprint(i)})
		for {
			evs, err := r.EventsAfter(ctx, task, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	if got := s.EventStats(); got != (EventStats{Events: 3, Commits: 3}) {
		t.Errorf("stats = %+v, want each event in its own commit", got)
	}
}

// FlushEvents, Close and an iteration's end return only once every
// queued event is committed: a committed iteration's end never precedes
// its events.
func TestFlushAndCloseCommitTheQueue(t *testing.T) {
	for _, end := range []string{"flush", "close", "end iteration"} {
		t.Run(end, func(t *testing.T) {
			h := newHeldWriter(t)
			if err := h.s.StartIteration(context.Background(), h.task, 1, "build", ""); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				h.s.QueueEvent(Event{TaskID: h.task, Iteration: 1, Kind: "text", Text: fmt.Sprint(i)})
			}
			<-h.batches
			done := make(chan error)
			go func() {
				switch end {
				case "flush":
					done <- h.s.FlushEvents()
				case "close":
					done <- h.s.Close()
				default:
					done <- h.s.EndIteration(context.Background(), Iteration{TaskID: h.task, Number: 1, Outcome: "done"})
				}
			}()
			select {
			case err := <-done:
				t.Fatalf("%s returned (%v) before the queued events were committed", end, err)
			case <-time.After(10 * time.Millisecond):
			}
			close(h.release)
			// The writer may have taken the first event alone; the rest
			// follow in a batch of their own.
			var err error
		wait:
			for {
				select {
				case <-h.batches:
				case err = <-done:
					break wait
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(texts(t, h.path), " "); got != "0 1 2 3 4" {
				t.Errorf("after %s the store holds %q, want every queued event", end, got)
			}
			if end != "close" {
				h.s.Close()
			}
		})
	}
}

// An event the database refuses costs only itself: the rest of its batch
// is committed, and FlushEvents says what was refused.
func TestRefusedEventLosesNoOther(t *testing.T) {
	h := newHeldWriter(t)
	defer h.s.Close()
	h.s.QueueEvent(Event{TaskID: h.task, Kind: "text", Text: "first"})
	<-h.batches
	h.s.QueueEvent(Event{TaskID: h.task, Kind: "text", Text: "before"})
	h.s.QueueEvent(Event{TaskID: h.task + 99, Kind: "text", Text: "no such task"})
	h.s.QueueEvent(Event{TaskID: h.task, Kind: "text", Text: "after"})
	h.release <- struct{}{}
	<-h.batches
	h.release <- struct{}{}
	err := h.s.FlushEvents()
	if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("flush error = %v, want the refused event's", err)
	}
	if got := strings.Join(texts(t, h.path), "|"); got != "first|before|after" {
		t.Errorf("store holds %q, want every event but the refused one", got)
	}
	if err := h.s.FlushEvents(); err != nil {
		t.Errorf("second flush = %v, want the error reported once", err)
	}
}

// An event added to a closed store is an error, not a hang.
func TestEventOnClosedStore(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.AddEvent(ctx, Event{TaskID: 1, Kind: "text"}); err == nil {
		t.Error("AddEvent on a closed store succeeded")
	}
	s.QueueEvent(Event{TaskID: 1, Kind: "text"})
	if err := s.FlushEvents(); err == nil {
		t.Error("QueueEvent on a closed store reported nothing")
	}
}

// BenchmarkEventBurst records an agent's session of 8 events as the
// engine does (queued, then flushed at the run's end), against the same
// events one transaction each (AddEvent), on a store that already holds
// a run's worth of events; RALPH_BENCH_FTS recreates the search index
// with other options first (e.g. "detail=column").
func BenchmarkEventBurst(b *testing.B) {
	for _, mode := range []string{"queued", "one-each"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, filepath.Join(b.TempDir(), "ralph.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			task := seedEvents(b, s, 10_000)
			if os.Getenv("RALPH_BENCH_FTS") == "off" {
				for _, q := range []string{`DROP TRIGGER events_fts_insert`, `DROP TABLE events_fts`} {
					if _, err := s.DB().ExecContext(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			} else if opts := os.Getenv("RALPH_BENCH_FTS"); opts != "" {
				for _, q := range []string{
					`DROP TABLE events_fts`,
					`CREATE VIRTUAL TABLE events_fts USING fts5(text, tool, data, content = 'events', content_rowid = 'id', tokenize = 'trigram', ` + opts + `)`,
					`INSERT INTO events_fts (events_fts) VALUES ('rebuild')`,
				} {
					if _, err := s.DB().ExecContext(ctx, q); err != nil {
						b.Fatal(err)
					}
				}
			}
			if kv := os.Getenv("RALPH_BENCH_FTS_CONFIG"); kv != "" {
				k, v, _ := strings.Cut(kv, "=")
				if _, err := s.DB().ExecContext(ctx, `INSERT INTO events_fts (events_fts, rank) VALUES (?, ?)`, k, v); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				for i := range 8 {
					e := Event{TaskID: task, Iteration: 2, Kind: "tool_call", Tool: "Write", Text: fmt.Sprintf("write file %d of the change", i), Data: `{"path":"internal/pkg/a.go","content":"package pkg\n"}`}
					if mode == "queued" {
						s.QueueEvent(e)
					} else if _, err := s.AddEvent(ctx, e); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.FlushEvents(); err != nil {
					b.Fatal(err)
				}
			}
			st := s.EventStats()
			b.ReportMetric(float64(st.Events)/float64(st.Commits), "events/commit")
		})
	}
}

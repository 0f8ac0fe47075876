package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// hub tells the event streams that the store changed.
type hub struct {
	mu    sync.Mutex
	ch    chan struct{}
	state liveState
}

// liveState is what an SSE "state" message carries: enough for the page
// to know what to refresh and when to notify.
type liveState struct {
	Version    int64  `json:"version"`
	Pending    int    `json:"pending"`
	Running    bool   `json:"running"`
	PID        int    `json:"pid,omitempty"`
	Task       int    `json:"task"`
	TaskStatus string `json:"task_status,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Workflow names the newest remote run (Task is 0 then).
	Workflow string `json:"workflow,omitempty"`
}

func newHub() *hub { return &hub{ch: make(chan struct{})} }

// current returns the latest state and a channel closed at the next
// change.
func (h *hub) current() (liveState, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state, h.ch
}

// publish records a new state and wakes the streams.
func (h *hub) publish(st liveState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st.Version = h.state.Version + 1
	h.state = st
	close(h.ch)
	h.ch = make(chan struct{})
}

// Watch wakes the event streams when another process commits to the
// store (SQLite's data_version changes) or a run starts or ends (the
// workspace lock); it returns when ctx ends. It copes with a database
// that does not exist yet or is busy.
//
// It learns of a commit from the file system: the writer's writes to the
// database's WAL (and to the lock file) wake it at once, and a check
// then asks SQLite whether a transaction committed. A wake can come
// before the commit is visible (the WAL is written before SQLite's
// shared index says the transaction is there), so a wake that finds no
// change checks again settleDelay later. The store is also checked every
// Options.Poll, or at least every second while the file watch works, for
// what the file system does not report.
func (s *Server) Watch(ctx context.Context) {
	if s.opt.Remote != nil {
		s.watchRemote(ctx)
		return
	}
	fw := newFileWake(s.ws.Path(workspace.Database))
	defer fw.close()
	var lastVersion int64 = -1
	lastPID := -1
	poll := s.opt.Poll
	if fw.ok() {
		poll = max(poll, time.Second)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	stopNotify := func() {}
	defer func() { stopNotify() }()
	notifying := false
	settle := time.NewTimer(0)
	<-settle.C
	defer settle.Stop()
	for {
		pid := s.ws.HolderPID()
		changed := pid != lastPID
		if st, err := s.store(ctx); err == nil {
			if !notifying {
				// The dashboard sends the notifications and takes their
				// answers while no run does (the notify lock decides).
				notifying = true
				if cfg, err := config.Load(s.ws.Root); err == nil {
					stopNotify = session.StartNotifierLog(ctx, s.log, s.ws, st, cfg.Notify, cfg.Limits.MaxCost)
				}
			}
			if v, err := st.DataVersion(ctx); err == nil && v != lastVersion {
				lastVersion, changed = v, true
			}
		}
		if changed {
			lastPID = pid
			s.refresh(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !fw.ok() {
				fw.retry()
			}
		case <-fw.wake:
			if !changed {
				settle.Reset(settleDelay)
			}
		case <-settle.C:
		}
	}
}

// settleDelay is how long after a file change that showed no commit the
// store is checked again.
const settleDelay = 5 * time.Millisecond

// fileWake reports writes to the store's files (the database, its WAL)
// and the workspace lock, through one buffered channel: many writes
// between two looks are one wake.
type fileWake struct {
	dir   string
	names map[string]bool
	w     *fsnotify.Watcher
	wake  chan struct{}
	done  chan struct{}
}

// newFileWake watches the directory of the database at db. Without
// inotify (or a directory to watch yet) it reports nothing and ok is
// false; retry tries again.
func newFileWake(db string) *fileWake {
	base := filepath.Base(db)
	fw := &fileWake{
		dir:   filepath.Dir(db),
		names: map[string]bool{base: true, base + "-wal": true, workspace.LockFile: true},
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	fw.retry()
	return fw
}

func (fw *fileWake) ok() bool { return fw.w != nil }

// retry starts the watch when it is not running.
func (fw *fileWake) retry() {
	if fw.w != nil {
		return
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return
	}
	if err := w.Add(fw.dir); err != nil {
		w.Close()
		return
	}
	fw.w = w
	go fw.run(w)
}

func (fw *fileWake) run(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if fw.names[filepath.Base(ev.Name)] {
				select {
				case fw.wake <- struct{}{}:
				default:
				}
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
		case <-fw.done:
			return
		}
	}
}

func (fw *fileWake) close() {
	close(fw.done)
	if fw.w != nil {
		fw.w.Close()
	}
}

// refresh reads the live state and publishes it.
func (s *Server) refresh(ctx context.Context) {
	if s.opt.Remote != nil {
		s.refreshRemote(ctx)
		return
	}
	ls := liveState{}
	if pid := s.ws.HolderPID(); pid != 0 {
		ls.Running, ls.PID = true, pid
	}
	if st, err := s.store(ctx); err == nil {
		if reqs, err := st.PendingHumanRequests(ctx); err == nil {
			ls.Pending = len(reqs)
		}
		if t, err := st.LatestTask(ctx); err == nil {
			ls.Task, ls.TaskStatus, ls.Reason = t.Number, t.Status, t.Reason
		}
	}
	s.hub.publish(ls)
}

// apiStream serves GET /api/events/stream: every event after the one the
// client last saw (Last-Event-ID, or ?after=ID; without either, from
// now), as "event" messages with the event's id, then new ones as they
// are written; and a "state" message whenever the store changes. With
// ?html=1 each event message carries the page's rendering of the event.
func (s *Server) apiStream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		s.jsonError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	ctx := r.Context()
	after, resume := int64(0), false
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.jsonError(w, http.StatusBadRequest, fmt.Sprintf("bad event id %q", v))
			return
		}
		after, resume = n, true
		break
	}
	if !resume && s.opt.Remote == nil {
		if st, err := s.store(ctx); err == nil {
			if evs, err := st.EventsPage(ctx, store.EventQuery{Limit: 1}); err == nil && len(evs) > 0 {
				after = evs[0].ID
			}
		}
	}
	withHTML := r.URL.Query().Get("html") == "1"
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	fl.Flush()

	sentVersion := int64(-1)
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	// send writes what buf holds and flushes it. A client that does not
	// read for writeTimeout is dropped, so a stalled one does not hold
	// its goroutine and its page of events for long.
	send := func() bool {
		if buf.Len() == 0 {
			return true
		}
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		if err == nil {
			err = rc.Flush()
		}
		_ = rc.SetWriteDeadline(time.Time{})
		return err == nil
	}
	for {
		state, wake := s.hub.current()
		// A remote run's events stay on its worker: the stream carries
		// only the state messages.
		if st, err := s.store(ctx); err == nil && s.opt.Remote == nil {
			if !s.replay(ctx, st, state.Version, &buf, &after, withHTML, send) {
				return
			}
		}
		if state.Version != sentVersion {
			b, _ := json.Marshal(state)
			fmt.Fprintf(&buf, "event: state\ndata: %s\n\n", b)
			sentVersion = state.Version
		}
		if !send() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-heartbeat.C:
			buf.WriteString(": ping\n\n")
			if !send() {
				return
			}
		}
	}
}

const (
	// streamPage is how many events the stream reads from the store at a
	// time.
	streamPage = 200
	// streamBuffer bounds what one client's stream holds in memory before
	// it writes it out: the writes block while the client does not read,
	// so a slow client holds at most this much.
	streamBuffer = 64 << 10
	// maxReplays caps the streams reading a page of backlog from the
	// store at once; the others wait their turn, holding no events.
	maxReplays = 4
	// writeTimeout is how long a stream waits on a client that does not
	// read before it drops it.
	writeTimeout = 30 * time.Second
)

// replay writes every event after *after to the stream, a page at a time,
// sending whenever buf passes streamBuffer; it advances *after. Reading a
// page takes one of maxReplays slots, released before anything is sent,
// so a client that stops reading holds one page and buf, and no slot. It
// reports false when the client is gone.
func (s *Server) replay(ctx context.Context, st *store.Store, version int64, buf *bytes.Buffer, after *int64, withHTML bool, send func() bool) bool {
	// The streams a commit wakes all ask for the same few events: the
	// first reads and renders them, the others take its copy.
	msg, last, evs, err := s.tail.read(version, *after, withHTML, func() ([]store.Event, error) {
		return s.readPage(ctx, st, *after)
	})
	for {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Warn("stream events", "err", err)
			}
			return ctx.Err() == nil
		}
		if msg != nil {
			buf.Write(msg)
			*after = last
			return true
		}
		for _, e := range evs {
			s.writeEventMessage(buf, e, withHTML)
			*after = e.ID
			if buf.Len() >= streamBuffer && !send() {
				return false
			}
		}
		if len(evs) < streamPage {
			return true
		}
		if !send() {
			return false
		}
		evs, err = s.readPage(ctx, st, *after)
	}
}

// readPage reads the page of events after event after, in one of the
// maxReplays slots.
func (s *Server) readPage(ctx context.Context, st *store.Store, after int64) ([]store.Event, error) {
	select {
	case s.replays <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.replays }()
	return st.EventsAfter(ctx, 0, after, streamPage)
}

// tailCache holds the last short read of the newest events, rendered, for
// the streams that wake at the same state version after the same event.
// Events are only ever appended, so what followed an event at a version
// still follows it; a stream at a later version reads again.
type tailCache struct {
	mu      sync.Mutex // held while reading: one read for the woken streams
	set     bool
	version int64
	after   int64
	last    int64
	msgs    [2][]byte // the messages, without and with HTML
	render  func(*bytes.Buffer, store.Event, bool)
}

// read returns the messages for a stream at version after event after, and
// the id of the last, from the cache or from load. When load returns a
// full page (a backlog, which is not cached) read returns its events
// instead, msg nil.
func (c *tailCache) read(version, after int64, withHTML bool, load func() ([]store.Event, error)) (msg []byte, last int64, evs []store.Event, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	if withHTML {
		i = 1
	}
	if c.set && c.version == version && c.after == after {
		return c.msgs[i], c.last, nil, nil
	}
	evs, err = load()
	if err != nil || len(evs) >= streamPage {
		return nil, 0, evs, err
	}
	var msgs [2]bytes.Buffer
	last = after
	for _, e := range evs {
		c.render(&msgs[0], e, false)
		c.render(&msgs[1], e, true)
		last = e.ID
	}
	c.set, c.version, c.after, c.last = true, version, after, last
	c.msgs = [2][]byte{msgs[0].Bytes(), msgs[1].Bytes()}
	return c.msgs[i], last, nil, nil
}

// streamEvent is an event as the stream sends it.
type streamEvent struct {
	store.Event
	HTML string `json:"html,omitempty"`
}

func (s *Server) writeEventMessage(buf *bytes.Buffer, e store.Event, withHTML bool) {
	se := streamEvent{Event: e}
	if withHTML {
		var b strings.Builder
		if err := s.pages["overview"].ExecuteTemplate(&b, "event", s.eventView(e)); err == nil {
			se.HTML = b.String()
		}
	}
	data, _ := json.Marshal(se)
	fmt.Fprintf(buf, "id: %d\nevent: event\ndata: %s\n\n", e.ID, s.scrub.Bytes(data))
}

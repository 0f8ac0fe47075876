// Package store keeps ralph's run history in an embedded SQLite database:
// tasks, iterations, the agent event stream, gate results, cross-process
// state (stop requests), human interactions, snapshots and spec state.
//
// The database runs in WAL mode with a busy timeout and immediate
// transactions, through one connection per process, so a reader in another
// process (ralph status, ralph log) never blocks the writer and a kill -9 at
// any moment leaves a database that opens. Migrations are embedded .sql
// files applied in order on open, tracked by PRAGMA user_version.
//
// The event stream is written by group commit (QueueEvent, AddEvent,
// FlushEvents): a burst of an agent's events costs a transaction or two,
// not one an event, and a kill -9 loses at most the events not yet
// committed, never part of a batch.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/ralph-harness/ralph/internal/secrets"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is an open ralph database.
type Store struct {
	db  *sql.DB
	now func() time.Time
	// path is the database file, and file what it was when opened: a
	// store whose file was deleted or replaced under it is Lost.
	path string
	file os.FileInfo
	// scrub removes the secrets of this process's environment from what
	// the store records of the agent's and the gates' output.
	scrub *secrets.Scrubber

	// stmtMu guards the statements prepared once and kept for the
	// store's life, by their SQL (stmt): the event stream's insert runs
	// for every event of every agent, and an iteration's own writes a
	// dozen times; parsing the SQL each time cost more than running it.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	// events commits the event stream in batches (eventwriter.go).
	events eventWriter
	// ended holds the process groups ended whose records ride on the
	// store's next write (EndProcGroupLater).
	ended pendingEnds
	// fts brings the search index up to date after events are
	// committed (ftsindex.go).
	fts ftsIndexer
}

// stmt returns query prepared, the first time it is asked for. With
// one connection, a statement is prepared before a transaction takes it:
// the transaction uses it through tx.StmtContext.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st := s.stmts[query]; st != nil {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st, nil
}

// exec runs query through its prepared statement (stmt), in the
// transaction of the ended process groups' records when there are some
// (EndProcGroupLater).
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if !s.ended.any() {
		return st.ExecContext(ctx, args...)
	}
	var res sql.Result
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err = tx.StmtContext(ctx, st).ExecContext(ctx, args...)
		return err
	})
	return res, err
}

// Open opens (creating if needed) the database at path and applies any
// pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	s := &Store{db: db, now: time.Now, path: path, scrub: secrets.ForProcess("")}
	s.events.cond.L = &s.events.mu
	// Switching a new database to WAL, or recovering a WAL another
	// process left, can report SQLITE_BUSY without waiting on the busy
	// handler; such a moment passes, so retry it for a while.
	for attempt := 0; ; attempt++ {
		err = s.migrate(ctx)
		if err == nil {
			s.file, _ = os.Stat(path)
			return s, nil
		}
		if !isBusy(err) || attempt >= 100 || ctx.Err() != nil {
			db.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// isBusy reports whether err is SQLite saying another connection holds
// the lock it needs.
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// Close commits the events still queued and closes the database.
func (s *Store) Close() error {
	s.closeEvents()
	if s.ended.any() {
		_ = s.tx(context.Background(), func(*sql.Tx) error { return nil })
	}
	indexErr := s.stopIndexing()
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	if err := s.db.Close(); err != nil {
		return err
	}
	return indexErr
}

// Lost reports whether the database file the store opened is no longer at
// its path: deleted (an agent's rm -rf .ralph) or replaced. The open
// store still holds everything; WriteBack puts it back.
func (s *Store) Lost() bool {
	if s.file == nil {
		return false
	}
	fi, err := os.Stat(s.path)
	return err != nil || !os.SameFile(fi, s.file)
}

// WriteBack writes the open database, whole and consistent, to its path
// again (SQLite's VACUUM INTO) when it was lost, so that ralph status and
// ralph resume see the run. Whatever sits at the path (a database that
// replaced it) is moved aside first, with its -wal and -shm files, to
// PATH.replaced. A store that is not lost is left alone. The open
// connection still writes to the lost file: call it once the run's last
// write is made.
func (s *Store) WriteBack(ctx context.Context) error {
	if !s.Lost() {
		return nil
	}
	s.waitEvents()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("write the store back: %w", err)
	}
	if _, err := os.Stat(s.path); err == nil {
		for _, ext := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(s.path+ext, s.path+".replaced"+ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("write the store back: %w", err)
			}
		}
	}
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, s.path); err != nil {
		return fmt.Errorf("write the store back to %s: %w", s.path, err)
	}
	s.file, _ = os.Stat(s.path)
	return nil
}

// DB exposes the database handle for packages that keep their own tables.
func (s *Store) DB() *sql.DB { return s.db }

func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	// Most opens find the schema current: check without taking the write
	// lock, so read-only commands never contend with a running loop.
	var current int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current == len(names) {
		return nil
	}
	// Each step reads the version inside its immediate transaction, so
	// two processes opening a new database at once apply each migration
	// exactly once: the second waits for the first and then skips.
	for {
		done := false
		err := s.tx(ctx, func(tx *sql.Tx) error {
			var version int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
				return fmt.Errorf("read schema version: %w", err)
			}
			if version > len(names) {
				return fmt.Errorf("database schema version %d is newer than this ralph (%d); upgrade ralph", version, len(names))
			}
			if version == len(names) {
				done = true
				return nil
			}
			body, err := migrations.ReadFile(names[version])
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", names[version], err)
			}
			_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version+1))
			return err
		})
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// tx runs fn in an immediate transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	ended, end := s.ended.take(), (*sql.Stmt)(nil)
	if len(ended) > 0 {
		var err error
		if end, err = s.stmt(ctx, endProcGroup); err != nil {
			s.ended.putBack(ended)
			return err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		s.ended.putBack(ended)
		return err
	}
	for _, g := range ended {
		// A record that fails leaves the group on record as running,
		// which the next ralph closes; a failed statement leaves the
		// transaction as it was.
		_, _ = tx.StmtContext(ctx, end).ExecContext(ctx, g.at, g.note, g.id)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		s.ended.putBack(ended)
		return err
	}
	if err := tx.Commit(); err != nil {
		s.ended.putBack(ended)
		return err
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns an error unless
// the database is sound.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New("integrity check: " + strings.Join(problems, "; "))
	}
	return nil
}

// CheckSearchIndex checks that the events' search index holds every
// event, word for word as the table has them (FTS5's integrity-check,
// rank 1). Events are indexed a moment after they are committed and when
// a store closes, so this holds only for a store no ralph has written to
// since its last Close.
func (s *Store) CheckSearchIndex(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

func (s *Store) stamp() string { return s.now().UTC().Format(time.RFC3339Nano) }

func parseTime(v sql.NullString) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, v.String)
	return t
}

// queryAll runs query and scans each row it returns with scan; what names
// the list in errors ("list steps: …").
func queryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(interface{ Scan(...any) error }) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

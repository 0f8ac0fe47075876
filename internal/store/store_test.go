package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenMigratesAndReopens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.CreateTask(ctx, 1, "build it", "fresh", "script")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartIteration(ctx, id, 1, "plan", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.EndIteration(ctx, Iteration{TaskID: id, Number: 1, Outcome: "continue", CostUSD: 0.25, InputTokens: 10}); err != nil {
		t.Fatal(err)
	}
	// A retried iteration replaces its usage instead of adding it twice.
	if err := s.StartIteration(ctx, id, 1, "plan", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.EndIteration(ctx, Iteration{TaskID: id, Number: 1, Outcome: "continue", CostUSD: 0.5, InputTokens: 20}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	task, err := s.LatestTask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if task.CostUSD != 0.5 || task.InputTokens != 20 {
		t.Errorf("task totals = $%v / %d tokens, want $0.5 / 20", task.CostUSD, task.InputTokens)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStateAndEvents(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok, _ := s.State(ctx, KeyStopRequest); ok {
		t.Fatal("fresh store has a stop request")
	}
	if err := s.SetState(ctx, KeyStopRequest, "enough"); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.State(ctx, KeyStopRequest); !ok || v != "enough" {
		t.Fatalf("stop request = %q, %v", v, ok)
	}
	id, _ := s.CreateTask(ctx, 1, "m", "", "script")
	for i := 0; i < 3; i++ {
		if _, err := s.AddEvent(ctx, Event{TaskID: id, Iteration: 1, Kind: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := s.EventsAfter(ctx, id, 1, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("EventsAfter = %d events, %v; want 2", len(evs), err)
	}
}

// Many processes opening a new database at once apply each migration once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			s, err := Open(ctx, path)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// Read-only opens while another connection writes steadily never fail:
// this is ralph status and ralph pending against a running loop.
func TestOpenWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	id, _ := w.CreateTask(ctx, 1, "m", "", "script")
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := w.AddEvent(ctx, Event{TaskID: id, Kind: "text", Text: "busy"}); err != nil {
				done <- err
				return
			}
		}
	}()
	for range 40 {
		r, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.LatestTask(ctx); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A recorded process group is listed as running until it is marked ended.
func TestProcGroups(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// On record by its token before it starts; its group id after.
	a, err := s.StartProcGroup(ctx, ProcGroup{Token: "t", RalphPID: 5, RalphStart: 99, Iteration: 2, Argv0: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetProcGroupLeader(ctx, a, 10, 1<<40); err != nil {
		t.Fatal(err)
	}
	b, err := s.StartProcGroup(ctx, ProcGroup{PGID: 11, Token: "u", RalphPID: 5, RalphStart: 99, Argv0: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EndProcGroup(ctx, b, "exited"); err != nil {
		t.Fatal(err)
	}
	gs, err := s.RunningProcGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || gs[0].ID != a || gs[0].PGID != 10 || gs[0].LeaderStart != 1<<40 || gs[0].Token != "t" ||
		gs[0].RalphPID != 5 || gs[0].RalphStart != 99 || gs[0].Iteration != 2 || gs[0].Argv0 != "claude" || gs[0].StartedAt.IsZero() {
		t.Errorf("running groups = %+v", gs)
	}
}

// BeginTask writes the task and its state keys together: when a state key
// cannot be written, no task is left behind either.
func TestBeginTaskIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.MaxTaskNumber(ctx); err != nil || n != 0 {
		t.Fatalf("MaxTaskNumber of an empty store = %d, %v", n, err)
	}
	id, err := s.BeginTask(ctx, 3, "build it", "pending", "script", func(id int64) map[string]string {
		return map[string]string{RequestKey("tok"): fmt.Sprint(id), "task:start": "{}"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.State(ctx, RequestKey("tok")); !ok || v != fmt.Sprint(id) {
		t.Errorf("request key = %q, %v; want %d", v, ok, id)
	}
	if n, _ := s.MaxTaskNumber(ctx); n != 3 {
		t.Errorf("MaxTaskNumber = %d, want 3", n)
	}
	// A state key the database refuses rolls the task back.
	if _, err := s.db.ExecContext(ctx, `CREATE TRIGGER no_bad BEFORE INSERT ON state WHEN NEW.key = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginTask(ctx, 4, "second", "pending", "script", func(int64) map[string]string {
		return map[string]string{"bad": "x"}
	}); err == nil {
		t.Fatal("BeginTask succeeded although its state key was refused")
	}
	tasks, _ := s.Tasks(ctx)
	if len(tasks) != 1 {
		t.Errorf("%d tasks after a failed BeginTask, want 1", len(tasks))
	}
	if ok, err := s.HasSnapshot(ctx, "task-3-pre"); err != nil || ok {
		t.Errorf("HasSnapshot before AddSnapshot = %v, %v", ok, err)
	}
	if err := s.AddSnapshot(ctx, Snapshot{Name: "task-3-pre", Commit: "abc", Task: 3, Kind: "task-pre"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.HasSnapshot(ctx, "task-3-pre"); err != nil || !ok {
		t.Errorf("HasSnapshot after AddSnapshot = %v, %v", ok, err)
	}
}

// A store whose file is deleted under it (rm -rf .ralph) says it is lost,
// keeps working, and writes everything back, the last writes included.
func TestLostStoreIsWrittenBack(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), ".ralph")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ralph.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateTask(ctx, 1, "before", "fresh", "script"); err != nil {
		t.Fatal(err)
	}
	if st.Lost() {
		t.Fatal("a store in place is lost")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if !st.Lost() {
		t.Fatal("a deleted store is not lost")
	}
	if _, err := st.CreateTask(ctx, 2, "after", "fresh", "script"); err != nil {
		t.Fatalf("the open store stopped working: %v", err)
	}
	if err := st.WriteBack(ctx); err != nil {
		t.Fatal(err)
	}
	back, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	tasks, err := back.Tasks(ctx)
	if err != nil || len(tasks) != 2 || tasks[1].Message != "after" {
		t.Fatalf("written back: %+v, %v", tasks, err)
	}
}

// A migration's number is its schema version: two files with one number,
// or a gap, would make a store's version mean different schemas on
// different builds.
func TestMigrationsNumberedInOrder(t *testing.T) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if want := fmt.Sprintf("migrations/%04d_", i+1); !strings.HasPrefix(name, want) {
			t.Errorf("migration %d is %s, want a name starting %s", i+1, name, want)
		}
	}
}

// A group ended "later" is on record as running until the store's next
// write, which records its end in the same transaction; a write that
// fails keeps it for the one after; closing the store writes what is
// left.
func TestEndProcGroupLater(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ralph.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	running := func(s *Store) int {
		t.Helper()
		gs, err := s.RunningProcGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(gs)
	}
	var ids []int64
	for _, tok := range []string{"a", "b", "c"} {
		id, err := s.StartProcGroup(ctx, ProcGroup{Token: tok, RalphPID: 5, Argv0: "claude"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	s.EndProcGroupLater(ids[0], "exited")
	if n := running(s); n != 3 {
		t.Fatalf("%d running before the next write, want 3", n)
	}
	if err := s.SetState(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if n := running(s); n != 2 {
		t.Fatalf("%d running after the next write, want 2", n)
	}

	// A write that fails (a statement the database refuses) rolls back,
	// and the end waits for the next.
	s.EndProcGroupLater(ids[1], "exited")
	if err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO no_such_table VALUES (1)`)
		return err
	}); err == nil {
		t.Fatal("a write into no table succeeded")
	}
	if n := running(s); n != 2 {
		t.Fatalf("%d running after a failed write, want 2", n)
	}
	if err := s.DeleteState(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n := running(s); n != 1 {
		t.Fatalf("%d running after the write after, want 1", n)
	}

	s.EndProcGroupLater(ids[2], "exited")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := running(s); n != 0 {
		t.Errorf("%d running after close, want 0", n)
	}
}

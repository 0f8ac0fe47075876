package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Task and stall names take any task number up to nine digits: task 100,
// 1000 and 123456789 are tasks like any other.
func TestNamesOfLargeTaskNumbers(t *testing.T) {
	for _, n := range []int{99, 100, 1000, 123456789} {
		for _, tc := range []struct {
			name string
			kind Kind
		}{{TaskPre(n), KindTaskPre}, {TaskPost(n), KindTaskPost}, {StallRecovery(n), KindStallRecovery}} {
			kind, task, ok := ParseName(tc.name)
			if !ok || kind != tc.kind || task != n {
				t.Errorf("ParseName(%q) = %q, %d, %v; want %q, %d, true", tc.name, kind, task, ok, tc.kind, n)
			}
		}
	}
}

// A second manual or rollback snapshot in the same second is saved under
// a suffixed name, which is itself a valid name that resolves; a taken
// suffixed name, task, post or stall name is refused.
func TestSaveSameSecondNames(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	r := open(t, dir)
	at := time.Unix(1708123456, 0)
	r.now = func() time.Time { return at }
	for _, name := range []string{Rollback(at), Manual(at)} {
		first, err := r.Save(ctx, name, "first")
		if err != nil {
			t.Fatal(err)
		}
		second, err := r.Save(ctx, name, "second")
		if err != nil {
			t.Fatalf("second %s in the same second: %v", name, err)
		}
		if first.Name != name || second.Name != name+"-2" {
			t.Errorf("names %s, %s; want %s, %s-2", first.Name, second.Name, name, name)
		}
		got, err := r.Resolve(ctx, second.Name)
		if err != nil || got.Message != "second" {
			t.Errorf("Resolve(%s) = %+v, %v", second.Name, got, err)
		}
		if s, err := r.Save(ctx, second.Name, "again"); !errors.Is(err, ErrSnapshotExists) {
			t.Errorf("%s saved again: saved %q, err %v; want ErrSnapshotExists", second.Name, s.Name, err)
		}
	}
	for _, name := range []string{TaskPre(100), TaskPost(100), StallRecovery(100)} {
		if _, err := r.Save(ctx, name, ""); err != nil {
			t.Fatalf("first %s: %v", name, err)
		}
		if s, err := r.Save(ctx, name, ""); !errors.Is(err, ErrSnapshotExists) {
			t.Errorf("second %s: saved %q, err %v; want ErrSnapshotExists", name, s.Name, err)
		}
	}
}

// Exists and Save refuse what is not a snapshot name, patterns included:
// Exists("task-*") is false even when task snapshots exist, and Resolve
// says the name is malformed rather than unknown.
func TestInvalidNames(t *testing.T) {
	ctx := context.Background()
	_, r, _, _ := savedRepo(t, "a.txt", "a\n")
	for _, name := range []string{"task-*", "task-1-*", "*", "task-1-pre/../task-1-pre", "task"} {
		ok, err := r.Exists(ctx, name)
		if ok || err != nil {
			t.Errorf("Exists(%q) = %v, %v; want false, nil", name, ok, err)
		}
		if _, err := r.Save(ctx, name, ""); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Save(%q): %v, want ErrInvalidName", name, err)
		}
	}
	_, err := r.Resolve(ctx, "task-*")
	var unknown *UnknownSnapshotError
	if !errors.As(err, &unknown) || !unknown.Malformed {
		t.Errorf("Resolve(task-*): %v, want a malformed-name error", err)
	}
	_, err = r.Resolve(ctx, TaskPre(2))
	if !errors.As(err, &unknown) || unknown.Malformed {
		t.Errorf("Resolve(task-2-pre): %v, want an unknown (not malformed) name", err)
	}
}

// A message of several lines is listed as it was given, line breaks and
// blank lines included, and never breaks the listing of the snapshots
// after it; a snapshot saved without a message lists none. List is
// oldest first.
func TestMessagesInList(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	r := open(t, dir)
	base := time.Unix(1708123456, 0)
	messages := []string{
		"first line\n\nsecond paragraph\n  indented\tand tabbed",
		"",
		"one line with a control\x07 character",
	}
	for i, m := range messages {
		r.now = func() time.Time { return base.Add(time.Duration(i) * time.Second) }
		if _, err := r.Save(ctx, TaskPre(i+1), m); err != nil {
			t.Fatal(err)
		}
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names, got []string
	for _, s := range list {
		names = append(names, s.Name)
		got = append(got, s.Message)
	}
	if diff := cmp.Diff([]string{"task-1-pre", "task-2-pre", "task-3-pre"}, names); diff != "" {
		t.Errorf("List names (-want +got):\n%s", diff)
	}
	want := []string{messages[0], "", "one line with a control character"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List messages (-want +got):\n%s", diff)
	}
}

// Diff tells added, modified and deleted files apart.
func TestDiffKinds(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "keep.txt", "k\n")
	write(t, dir, "change.txt", "c\n")
	write(t, dir, "drop.txt", "d\n")
	r := open(t, dir)
	if _, err := r.Save(ctx, TaskPre(1), ""); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "change.txt", "changed\n")
	write(t, dir, "new.txt", "n\n")
	remove(t, dir, "drop.txt")
	got, err := r.Diff(ctx, TaskPre(1))
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{Path: "change.txt", Change: Modified}, {Path: "drop.txt", Change: Deleted}, {Path: "new.txt", Change: Added}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
}

// The store's write-ahead log and shared-memory files are ralph's own,
// like the database: never saved, never rolled back.
func TestStoreSidecarFilesArePrivate(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	for _, f := range []string{"ralph.db", "ralph.db-wal", "ralph.db-shm"} {
		write(t, dir, filepath.Join(".ralph", f), "state")
	}
	r := open(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range snapshotFiles(t, dir, s) {
		if filepath.Dir(f) == ".ralph" {
			t.Errorf("snapshot holds ralph's private file %s", f)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "ralph.db-wal"), []byte("later"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Rollback(ctx, TaskPre(1)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".ralph", "ralph.db-wal")); string(b) != "later" {
		t.Errorf("rollback changed ralph.db-wal to %q", b)
	}
}

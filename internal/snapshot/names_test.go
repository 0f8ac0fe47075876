package snapshot

import (
	"testing"
	"time"
)

func TestNameConstructors(t *testing.T) {
	at := time.Unix(1708123456, 0)
	for _, tc := range []struct {
		got, want string
		kind      Kind
		task      int
	}{
		{TaskPre(3), "task-3-pre", KindTaskPre, 3},
		{TaskPost(12), "task-12-post", KindTaskPost, 12},
		{Manual(at), "manual-1708123456", KindManual, 0},
		{StallRecovery(2), "stall-2-recovery", KindStallRecovery, 2},
		{Rollback(at), "rollback-1708123456", KindRollback, 0},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
		kind, task, ok := ParseName(tc.got)
		if !ok || kind != tc.kind || task != tc.task {
			t.Errorf("ParseName(%q) = %q, %d, %v; want %q, %d, true", tc.got, kind, task, ok, tc.kind, tc.task)
		}
	}
}

func TestValidName(t *testing.T) {
	valid := []string{"task-1-pre", "task-0-post", "manual-1708123456", "manual-1708123456-2",
		"stall-4-recovery", "rollback-1708123456", "rollback-1708123456-17"}
	invalid := []string{"", "main", "HEAD", "v1.0", "refs/heads/main", "refs/ralph/snapshots/task-1-pre",
		"task-1-pre/..", "..", "../task-1-pre", "task-..-pre", "-task-1-pre", "--force", "task-1-pre ",
		"task 1 pre", "task-1-mid", "task--1-pre", "manual-", "manual-abc", "manual-1-2-3",
		"stall-1-pre", "rollback-1708123456-", "task-1-pre\n", "TASK-1-PRE", "task-1234567890-pre"}
	for _, n := range valid {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false, want true", n)
		}
	}
	for _, n := range invalid {
		if ValidName(n) {
			t.Errorf("ValidName(%q) = true, want false", n)
		}
	}
}

func TestUnknownSnapshotErrorMessage(t *testing.T) {
	e := &UnknownSnapshotError{Name: "main", Malformed: true, Valid: []string{"task-1-pre", "task-1-post"}}
	want := `"main" is not a ralph snapshot name (names are ` + NameForms + `); valid snapshots: task-1-pre, task-1-post`
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
	e = &UnknownSnapshotError{Name: "task-9-pre"}
	if got, want := e.Error(), `no snapshot named "task-9-pre"; there are no snapshots yet`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

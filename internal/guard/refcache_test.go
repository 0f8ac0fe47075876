package guard_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/guard"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// age sets the times of every file and directory in r's git directory ten
// seconds back, as if the refs were written long before the check.
func (r *historyRepo) age() {
	r.t.Helper()
	old := time.Now().Add(-10 * time.Second)
	err := filepath.WalkDir(filepath.Join(r.dir, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// logGit puts a git on PATH that counts its calls, and returns the count
// so far.
func logGit(t *testing.T) func() int {
	t.Helper()
	log := testutil.LogGit(t)
	return func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
}

// A check that finds the refs' files as the last read left them asks git
// nothing, and still every change to the history is caught: once the
// last read is reused, a reset, a rebase, an amend, a branch switch, a
// detached HEAD, a moved snapshot ref, and a change within the same tick
// of a file system's clock.
func TestHistoryReusesUnchangedRefs(t *testing.T) {
	ctx := context.Background()
	calls := logGit(t)
	prime := func(r *historyRepo) (guard.Origin, guard.HistoryMark) {
		t.Helper()
		r.age()
		o, m := r.start()
		before := calls()
		if rep, _, err := guard.History(ctx, r.dir, o, m, "k"); err != nil || rep.Changed() {
			t.Fatalf("nothing changed, and History says %q, %v", rep, err)
		}
		if n := calls() - before; n != 0 {
			t.Errorf("a check of unchanged refs ran git %d times, want none", n)
		}
		return o, m
	}
	for _, tc := range []struct {
		name  string
		agent func(r *historyRepo)
	}{
		{"reset", func(r *historyRepo) { r.git("reset", "-q", "--hard", "HEAD~2") }},
		{"rebase", func(r *historyRepo) { r.git("rebase", "-q", "--onto", "HEAD~2", "HEAD~1") }},
		{"amend", func(r *historyRepo) { r.git("commit", "-q", "--amend", "-m", "u2 amended") }},
		{"switch", func(r *historyRepo) { r.git("checkout", "-q", "-b", "other") }},
		{"detach", func(r *historyRepo) { r.git("checkout", "-q", "--detach", "HEAD") }},
		{"snapshot ref", func(r *historyRepo) { r.git("update-ref", "refs/ralph/snapshots/task-1-pre", "HEAD~1") }},
		{"packed", func(r *historyRepo) {
			r.git("pack-refs", "--all")
			r.git("update-ref", "refs/heads/main", "HEAD~1")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newHistoryRepo(t)
			o, m := prime(r)
			tc.agent(r)
			rep, _, err := guard.History(ctx, r.dir, o, m, "k")
			if err != nil || !rep.Changed() {
				t.Errorf("History after the agent's %s = %q, %v; want it caught", tc.name, rep, err)
			}
		})
	}
}

// On a file system whose clock keeps whole seconds, a ref rewritten in
// the second of the last read keeps its file's size and time: the read
// is not reused then (git's racy rule), and the reset is caught.
func TestHistoryRefChangedWithinATick(t *testing.T) {
	ctx := context.Background()
	guard.CoarseFileTimes(t)
	r := newHistoryRepo(t)
	r.git("pack-refs", "--all")
	o, m := r.start()
	// The reset, written into packed-refs in place: the same size, and
	// (most likely) the same second.
	packed := filepath.Join(r.dir, ".git", "packed-refs")
	b, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	tip, base := r.git("rev-parse", "main"), r.git("rev-parse", "main~2")
	if !strings.Contains(string(b), tip+" refs/heads/main") {
		t.Fatalf("packed-refs holds no main:\n%s", b)
	}
	reset := strings.Replace(string(b), tip+" refs/heads/main", base+" refs/heads/main", 1)
	if err := os.WriteFile(packed, []byte(reset), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, err := guard.History(ctx, r.dir, o, m, "k")
	if err != nil || rep.Dropped != 2 {
		t.Errorf("History after a reset in the same second = %q, %v; want 2 commits dropped", rep, err)
	}
}

// A loose ref's content is reused from the last read only while its
// file's stamp is unchanged and was not racy: a snapshot ref rewritten in
// place in the second of the last read, at the same size, on a clock of
// whole seconds, is read again, and the move is caught.
func TestHistoryLooseRefRewrittenWithinATick(t *testing.T) {
	ctx := context.Background()
	guard.CoarseFileTimes(t)
	r := newHistoryRepo(t)
	o, m := r.start()
	// A check that records the read the next one compares with.
	if rep, _, err := guard.History(ctx, r.dir, o, m, "k"); err != nil || rep.Changed() {
		t.Fatalf("nothing changed, and History says %q, %v", rep, err)
	}
	ref := filepath.Join(r.dir, ".git", "refs", "ralph", "snapshots", "task-1-pre")
	if _, err := os.Stat(ref); err != nil {
		t.Fatalf("the repository has no loose snapshot ref: %v", err)
	}
	moved := r.git("rev-parse", "HEAD~1") + "\n"
	if err := os.WriteFile(ref, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, err := guard.History(ctx, r.dir, o, m, "k")
	if err != nil || !rep.Changed() {
		t.Errorf("History after a snapshot ref rewritten in the same second = %q, %v; want it caught", rep, err)
	}
}

// BenchmarkHistoryUnchanged is the history check of every agent run where
// nobody moved a ref, in a workspace with 300 snapshot refs (a hundred
// tasks' worth), loose files and packed (as internal/snapshot packs them
// once there are more than a few dozen).
func BenchmarkHistoryUnchanged(b *testing.B) {
	for _, packed := range []bool{false, true} {
		b.Run(map[bool]string{false: "loose", true: "packed"}[packed], func(b *testing.B) {
			ctx := context.Background()
			r := newHistoryRepo(b)
			var in strings.Builder
			head := r.git("rev-parse", "HEAD")
			for i := range 300 {
				fmt.Fprintf(&in, "create refs/ralph/snapshots/task-%d-post %s\n", i+2, head)
			}
			if _, err := git.RunWith(ctx, r.dir, git.Options{Stdin: []byte(in.String())}, "update-ref", "--stdin"); err != nil {
				b.Fatal(err)
			}
			if packed {
				r.git("pack-refs", "--all")
			}
			r.age()
			o, m := r.start()
			b.ResetTimer()
			for b.Loop() {
				if rep, _, err := guard.History(ctx, r.dir, o, m, "k"); err != nil || rep.Changed() {
					b.Fatalf("nothing changed, and History says %q, %v", rep, err)
				}
			}
		})
	}
}

// A branch switch the check could not put back (another git held the
// index's lock) is reported again by the next check, though its read is
// the one the mark was then taken from.
func TestHistoryUnrepairedSwitchReportedAgain(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	o, m := r.start()
	r.git("checkout", "-q", "--detach", "HEAD")
	lock := filepath.Join(r.dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, m, err := guard.History(ctx, r.dir, o, m, "k1")
	if err != nil || rep.Switched == "" || len(rep.Problems) == 0 {
		t.Fatalf("History of a switch it cannot put back = %q, problems %q, %v; want the switch and a problem", rep, rep.Problems, err)
	}
	// Aged, the ref files' read is reused: the one the mark came from.
	r.age()
	if _, m, err = guard.History(ctx, r.dir, o, m, "k2"); err != nil {
		t.Fatal(err)
	}
	rep, _, err = guard.History(ctx, r.dir, o, m, "k3")
	if err != nil || rep.Switched == "" {
		t.Errorf("the next check = %q, %v; want the switch reported again", rep, err)
	}
}

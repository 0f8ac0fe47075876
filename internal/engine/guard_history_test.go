package engine

import (
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/guard"
)

// A record is written again unless it says what the stored one says.
func TestSameRecord(t *testing.T) {
	mark := func(tip string, refs map[string]string) *guard.HistoryMark {
		return &guard.HistoryMark{Tip: tip, Refs: refs}
	}
	o := guard.Origin{Branch: "refs/heads/main", Head: "a"}
	base := historyRecord{Origin: o, Mark: mark("b", map[string]string{"refs/ralph/tip": "c"})}
	for _, tc := range []struct {
		name string
		rec  historyRecord
		same bool
	}{
		{"the same", historyRecord{Origin: o, Mark: mark("b", map[string]string{"refs/ralph/tip": "c"})}, true},
		{"another tip", historyRecord{Origin: o, Mark: mark("x", map[string]string{"refs/ralph/tip": "c"})}, false},
		{"a ref moved", historyRecord{Origin: o, Mark: mark("b", map[string]string{"refs/ralph/tip": "x"})}, false},
		{"a ref more", historyRecord{Origin: o, Mark: mark("b", map[string]string{"refs/ralph/tip": "c", "refs/ralph/snapshots/task-1-pre": "d"})}, false},
		{"no mark", historyRecord{Origin: o}, false},
		{"another origin", historyRecord{Origin: guard.Origin{Branch: "refs/heads/dev", Head: "a"}, Mark: mark("b", map[string]string{"refs/ralph/tip": "c"})}, false},
	} {
		if got := sameRecord(base, tc.rec); got != tc.same {
			t.Errorf("%s: sameRecord = %v, want %v", tc.name, got, tc.same)
		}
	}
}

// The check before an agent runs is skipped only while the one after the
// last agent run stands: it ended without error, no program started
// since or runs, and under a second passed.
func TestQuietCheckHolds(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	q := quietCheck{at: at, runs: 7, ok: true}
	for _, tc := range []struct {
		name          string
		q             quietCheck
		runs, running int64
		now           time.Time
		holds         bool
	}{
		{"nothing since", q, 7, 0, at.Add(2 * time.Millisecond), true},
		{"a program started since (a gate)", q, 8, 0, at.Add(2 * time.Millisecond), false},
		{"a program runs (another spec's agent)", q, 7, 1, at.Add(2 * time.Millisecond), false},
		{"a second passed (a person was asked)", q, 7, 0, at.Add(quietFor), false},
		{"the check failed", quietCheck{at: at, runs: 7}, 7, 0, at.Add(2 * time.Millisecond), false},
	} {
		if got := tc.q.holds(tc.runs, tc.running, tc.now); got != tc.holds {
			t.Errorf("%s: holds = %v, want %v", tc.name, got, tc.holds)
		}
	}
}

package engine

import (
	"testing"

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

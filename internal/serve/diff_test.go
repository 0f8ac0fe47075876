package serve

import (
	"strings"
	"testing"
)

// FuzzLineDiff checks that a diff holds both sides: its unchanged and
// removed lines are the old text, its unchanged and added lines the new.
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("one\ntwo\n", "")
	f.Add("x\nx\nx\n", "x\ny\nx\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.Count(a, "\n") > 300 || strings.Count(b, "\n") > 300 {
			return
		}
		var old, cur []string
		for _, l := range fullDiff(a, b) {
			if l.Op != "+" {
				old = append(old, l.Text)
			}
			if l.Op != "-" {
				cur = append(cur, l.Text)
			}
		}
		if got, want := strings.Join(old, "\n"), strings.Join(splitLines(a), "\n"); got != want {
			t.Fatalf("old side %q, want %q", got, want)
		}
		if got, want := strings.Join(cur, "\n"), strings.Join(splitLines(b), "\n"); got != want {
			t.Fatalf("new side %q, want %q", got, want)
		}
		folded := lineDiff(a, b)
		if len(folded) > len(fullDiff(a, b)) {
			t.Fatal("folding made the diff longer")
		}
	})
}

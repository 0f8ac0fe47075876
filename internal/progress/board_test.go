package progress

import (
	"slices"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/spec"
)

// On a terminal the board keeps one line per spec, redrawn in place and
// cut to the terminal's width; elsewhere every line is printed as it comes.
func TestSpecBoard(t *testing.T) {
	var buf strings.Builder
	b := &Board{w: &buf, tty: true, width: 40, lines: map[string]string{}}
	a, c := spec.Spec{Rel: "a.md"}, spec.Spec{Rel: "c.md"}
	b.Line(a, "a.md: planning (attempt 1)")
	b.Line(c, "c.md: planning (attempt 1)")
	b.Line(a, "a.md: implementing (attempt 1) with a line far too long for forty columns")
	frames := strings.Split(buf.String(), "\x1b[2A")
	if len(frames) != 2 || !strings.Contains(frames[0], "\x1b[1A") {
		t.Fatalf("redraws: %q", buf.String())
	}
	last := strings.Split(strings.TrimSuffix(frames[1], "\n"), "\n")
	want := []string{"\x1b[2K  a.md: implementing (attempt 1) with …", "\x1b[2K  c.md: planning (attempt 1)"}
	if !slices.Equal(last, want) {
		t.Errorf("last frame:\n%q\nwant\n%q", last, want)
	}

	buf.Reset()
	plain := &Board{w: &buf, lines: map[string]string{}}
	plain.Line(a, "a.md: planning (attempt 1)")
	plain.Line(a, "a.md: implementing (attempt 1)")
	if buf.String() != "  a.md: planning (attempt 1)\n  a.md: implementing (attempt 1)\n" {
		t.Errorf("plain output: %q", buf.String())
	}
}

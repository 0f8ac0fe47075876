package progress

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"

	"github.com/ralph-harness/ralph/internal/spec"
)

// Board shows a parallel spec run's progress: on a terminal, one line per
// spec, redrawn in place; elsewhere every line as it comes.
type Board struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	width int // of the terminal; lines are cut to it so none wraps
	order []string
	lines map[string]string
	drawn int
}

// NewBoard returns a Board writing to w.
func NewBoard(w io.Writer) *Board {
	b := &Board{w: w, lines: map[string]string{}, width: 80}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.tty = true
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 10 {
			b.width = cols
		}
	}
	return b
}

// Line shows line as spec s's progress.
func (b *Board) Line(s spec.Spec, line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.tty {
		fmt.Fprintln(b.w, "  "+line)
		return
	}
	if _, ok := b.lines[s.Rel]; !ok {
		b.order = append(b.order, s.Rel)
	}
	b.lines[s.Rel] = line
	if b.drawn > 0 {
		fmt.Fprintf(b.w, "\x1b[%dA", b.drawn)
	}
	for _, rel := range b.order {
		fmt.Fprintf(b.w, "\x1b[2K  %s\n", cut(b.lines[rel], b.width-3))
	}
	b.drawn = len(b.order)
}

// cut shortens s to n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

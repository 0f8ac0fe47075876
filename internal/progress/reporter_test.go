package progress

import (
	"testing"
	"unicode/utf8"
)

func TestOneLineNeverCutsACharacter(t *testing.T) {
	got := OneLine("añadir el menú de café", 8)
	if !utf8.ValidString(got) || got != "añadir…" {
		t.Errorf("OneLine = %q", got)
	}
}

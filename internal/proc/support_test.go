package proc

import (
	"strings"
	"testing"
)

// Where ralph cannot look for orphaned programs it says so in one line
// naming the system; on Linux it looks and says nothing.
func TestOrphanSupportSaysWhyInOneLine(t *testing.T) {
	for _, goos := range []string{"darwin", "windows", "freebsd"} {
		got := orphanSupport(goos)
		if got == "" || strings.Contains(got, "\n") || !strings.Contains(got, goos) {
			t.Errorf("orphanSupport(%q) = %q, want one line naming %s", goos, got, goos)
		}
	}
	if got := orphanSupport("linux"); got != "" {
		t.Errorf("orphanSupport(linux) = %q, want empty: Linux looks for orphans", got)
	}
}

package claude

import (
	"os"
	"testing"

	"github.com/ralph-harness/ralph/internal/proc"
)

// TestMain makes the test binary a process supervisor, as ralph's main
// does: the real CLI then runs under it, confined by the sandbox the
// end-to-end tests ask for.
func TestMain(m *testing.M) {
	proc.RunSupervisor()
	os.Exit(m.Run())
}

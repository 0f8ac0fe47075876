package gate

import (
	"testing"

	"github.com/ralph-harness/ralph/internal/proc"
	"go.uber.org/goleak"
)

// TestMain makes the test binary a process supervisor, as ralph's main
// does, and fails the package when a test leaves a goroutine running.
func TestMain(m *testing.M) {
	proc.RunSupervisor()
	goleak.VerifyTestMain(m)
}

package proc

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain makes the test binary a process supervisor, as ralph's main
// does, and fails the package when a test leaves a goroutine running.
func TestMain(m *testing.M) {
	RunSupervisor()
	goleak.VerifyTestMain(m)
}

package api

import (
	"os"
	"testing"

	"github.com/ralph-harness/ralph/internal/proc"
)

// TestMain makes the test binary a process supervisor, as ralph's main
// does, so the run tool's commands can be confined.
func TestMain(m *testing.M) {
	proc.RunSupervisor()
	os.Exit(m.Run())
}

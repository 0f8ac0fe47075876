package engine

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ralph-harness/ralph/internal/proc"
	"github.com/ralph-harness/ralph/internal/store"
	"go.uber.org/goleak"
)

// TestMain makes the test binary a process supervisor, as ralph's main
// does, and fails the package when a test leaves a goroutine running.
func TestMain(m *testing.M) {
	if db := os.Getenv(sealProbeEnv); db != "" {
		os.Exit(sealProbe(db))
	}
	proc.RunSupervisor()
	goleak.VerifyTestMain(m)
}

// sealProbeEnv makes the test binary a program agent that says whether
// the store at its value holds the seal of the latest task's harness
// files and the start of its iteration, as it starts.
const sealProbeEnv = "RALPH_ENGINE_TEST_SEAL_PROBE"

func sealProbe(db string) int {
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer st.Close()
	tk, err := st.LatestTask(ctx)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	_, sealed, _ := st.State(ctx, sealKey(tk.ID))
	its, _ := st.Iterations(ctx, tk.ID)
	fmt.Printf("sealed %v, iterations %d\n", sealed, len(its))
	return 0
}

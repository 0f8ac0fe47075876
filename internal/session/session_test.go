package session

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// A command that opens its workspace more than once (the Temporal
// mode's check, then the command) finds the working tree's top once;
// another Dir is found again.
func TestOpenWorkspaceFindsTheTreeOnce(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	log := testutil.LogGit(t)
	g := &Globals{Dir: a}
	for range 3 {
		ws, _, err := OpenWorkspace(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		if real, _ := os.Stat(a); ws == nil || !sameDir(t, ws.Root, real) {
			t.Fatalf("workspace %v, want %s", ws, a)
		}
	}
	g.Dir = b
	ws, _, err := OpenWorkspace(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := os.Stat(b); !sameDir(t, ws.Root, real) {
		t.Errorf("after Dir changed, workspace %s, want %s", ws.Root, b)
	}
	calls, _ := os.ReadFile(log)
	if n := strings.Count(string(calls), "rev-parse"); n != 2 {
		t.Errorf("four opens in two directories ran git rev-parse %d times, want 2:\n%s", n, calls)
	}
}

func sameDir(t *testing.T, path string, want os.FileInfo) bool {
	t.Helper()
	fi, err := os.Stat(path)
	return err == nil && os.SameFile(fi, want)
}

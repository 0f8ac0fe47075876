package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The agent finds the ralph that runs it on its PATH, though the user
// never installed it there: the prompt tells it to run `ralph theme` and
// `ralph snapshot`.
func TestAgentFindsRalphOnItsPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ralph binary")
	}
	bin := buildRalph(t)
	dir := gitRepo(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	script := "ralph version > seen.txt; printf 'Checked\\n' > .ralph/summary.md; printf complete > .ralph/status.txt"
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// A PATH with the system's tools and git, and no ralph.
	t.Setenv("PATH", "/usr/bin:/bin")
	res := runRalph(t, bin, dir, time.Minute, "run", "--agent", "command", "--command", sh+" agent.sh", "check the version")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.out)
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen.txt"))
	if err != nil || !strings.Contains(string(seen), "ralph") {
		t.Errorf("the agent's `ralph version` printed %q (%v)\n%s", seen, err, res.out)
	}
}

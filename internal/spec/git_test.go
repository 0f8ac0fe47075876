package spec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/git"
)

// The diff a review reads runs no command the repository's config names:
// the agent can write .git/config, and a textconv driver or an external
// diff would run as ralph, outside its sandbox.
func TestDiffRunsNoConfiguredCommand(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	run := func(args ...string) string {
		t.Helper()
		out, err := git.RunWith(ctx, root, git.Options{Env: git.Identity}, args...)
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write(".gitattributes", "* diff=x\n")
	write("a.txt", "one\n")
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	base := run("rev-parse", "HEAD")
	write("a.txt", "two\n")
	run("commit", "-q", "-am", "two")
	touch := `sh -c 'touch "` + marker + `"; cat "$0"'`
	run("config", "diff.x.textconv", touch)
	run("config", "diff.external", `sh -c 'touch "`+marker+`"'`)
	got, err := diff(ctx, root, base, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "-one") || !strings.Contains(got, "+two") {
		t.Errorf("diff = %q, want the change of a.txt", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the diff ran a command .git/config names")
	}
}

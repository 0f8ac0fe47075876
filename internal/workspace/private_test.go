package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// IsPrivate says private of exactly what the .gitignore that Init writes
// makes git ignore, and PrivatePaths names each private entry.
func TestIsPrivateAgreesWithGit(t *testing.T) {
	ws := newWorkspace(t)
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		// near misses: agent-facing, or not ralph's
		".ralph/phase.txt", ".ralph/ralph.dbx", ".ralph/logs.txt", ".ralph/worktreesx/a",
		".ralph/sub/ralph.db", "logs/x.log", "ralph.db", "serve.token",
	}
	for i, p := range PrivatePaths() {
		if strings.HasSuffix(Private[i], "/") {
			p += "/inside"
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		full := filepath.Join(ws.Root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("git", "-C", ws.Root, "status", "--porcelain", "--untracked-files=all", "--ignored").Output()
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if len(l) < 4 {
			continue
		}
		seen[l[3:]] = true
		ignored[l[3:]] = l[:2] == "!!"
	}
	for _, p := range paths {
		if !seen[p] {
			t.Errorf("git status does not list %s:\n%s", p, out)
		}
		if got, want := IsPrivate(p), ignored[p]; got != want {
			t.Errorf("IsPrivate(%q) = %v, git ignores it: %v", p, got, want)
		}
	}
	for _, p := range PrivatePaths() {
		if !IsPrivate(p) || !IsPrivate(p+"/") || !IsPrivate(p+"/x") {
			t.Errorf("IsPrivate(%q) = false for an entry of PrivatePaths", p)
		}
	}
	for _, p := range []string{".ralph/worktrees/task-1/src/a.go", ".ralph/logs/iteration-1.log"} {
		if !IsPrivate(p) {
			t.Errorf("IsPrivate(%q) = false, want true", p)
		}
	}
}

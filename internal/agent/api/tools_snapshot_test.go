package api

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/testutil"
)

// newRepoToolbox returns a toolbox on a fresh git repository.
func newRepoToolbox(t *testing.T) (*toolbox, string) {
	t.Helper()
	dir := testutil.GitRepo(t)
	ws, err := newWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &toolbox{ws: ws, runTimeout: DefaultRunTimeout}, dir
}

var savedRE = regexp.MustCompile(`^saved (manual-\d+(?:-\d+)?) \(commit [0-9a-f]{12}\)$`)

func TestSnapshotSaveListDiff(t *testing.T) {
	tb, dir := newRepoToolbox(t)
	out, err := call(t, tb, "snapshot_list", nil)
	if err != nil || out != "no snapshots yet; snapshot_save takes one" {
		t.Errorf("empty list: %q, %v", out, err)
	}

	write(t, dir, "keep.txt", "keep\n")
	write(t, dir, "edit.txt", "one\n")
	write(t, dir, "gone.txt", "bye\n")
	out, err = call(t, tb, "snapshot_save", map[string]any{"message": "before the refactor"})
	if err != nil {
		t.Fatal(err)
	}
	m := savedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("snapshot_save: %q", out)
	}
	name := m[1]

	// The snapshot is real: the snapshot package sees it, with its message.
	repo, err := snapshot.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := repo.Resolve(context.Background(), name)
	if err != nil || !strings.Contains(s.Message, "before the refactor") {
		t.Fatalf("resolve %s: %+v, %v", name, s, err)
	}
	// The user's branch is untouched.
	if head := gitOut(t, dir, "log", "--format=%s"); head != "start" {
		t.Errorf("branch history = %q", head)
	}

	// A message is optional; a second save in the same second gets a suffix.
	out, err = call(t, tb, "snapshot_save", nil)
	if err != nil || !savedRE.MatchString(out) || strings.Contains(out, "saved "+name+" ") {
		t.Errorf("second save: %q, %v", out, err)
	}

	out, err = call(t, tb, "snapshot_list", nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], name+"  ") || !strings.HasSuffix(lines[0], "  before the refactor") {
		t.Errorf("snapshot_list:\n%s", out)
	}

	out, err = call(t, tb, "snapshot_diff", map[string]any{"name": name})
	if err != nil || out != "no changes since "+name {
		t.Errorf("diff of an unchanged tree: %q, %v", out, err)
	}
	write(t, dir, "edit.txt", "two\n")
	write(t, dir, "new.txt", "hi\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	out, err = call(t, tb, "snapshot_diff", map[string]any{"name": name})
	want := "modified  edit.txt\ndeleted   gone.txt\nadded     new.txt\n3 files changed since " + name + " (1 added, 1 modified, 1 deleted)\n"
	if err != nil || !sameLines(out, want) {
		t.Errorf("snapshot_diff = %q, %v; want %q", out, err, want)
	}

	out, err = call(t, tb, "snapshot_diff", map[string]any{"name": "task-9-pre"})
	wantErr(t, out, err, `no snapshot named "task-9-pre"; valid snapshots: `+name)
	out, err = call(t, tb, "snapshot_diff", map[string]any{"name": "HEAD"})
	wantErr(t, out, err, "is not a ralph snapshot name")
	out, err = call(t, tb, "snapshot_diff", map[string]any{})
	wantErr(t, out, err, "name is empty")
}

// sameLines compares outputs whose lines may come in any order.
func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(x) != len(y) {
		return false
	}
	seen := map[string]int{}
	for _, l := range x {
		seen[l]++
	}
	for _, l := range y {
		if seen[l] == 0 {
			return false
		}
		seen[l]--
	}
	return true
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func TestSnapshotOutsideGit(t *testing.T) {
	tb, _ := newToolbox(t)
	for _, name := range []string{"snapshot_save", "snapshot_list"} {
		out, err := call(t, tb, name, nil)
		wantErr(t, out, err, "not in a git repository")
	}
}

// No tool restores a snapshot: a rollback is the human's call.
func TestNoRollbackTool(t *testing.T) {
	for _, d := range toolDefs {
		if strings.Contains(d.Name, "rollback") || strings.Contains(d.Name, "restore") {
			t.Errorf("tool %s offers the model a rollback", d.Name)
		}
	}
	tb, _ := newRepoToolbox(t)
	out, err := call(t, tb, "snapshot_rollback", map[string]any{"name": "task-1-pre"})
	wantErr(t, out, err, `unknown tool "snapshot_rollback"`)
}

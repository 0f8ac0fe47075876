package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// seededRepo is a committed project with a tracked file a .gitignore
// pattern matches, then a staged change, a staged change changed again
// in the working tree, an ignored file added with -f and an untracked
// ignored one; every file's times are an hour back, so none of the
// index's entries is racily clean.
func seededRepo(t *testing.T) string {
	t.Helper()
	dir := newRepo(t)
	write(t, dir, ".gitignore", "*.log\n")
	write(t, dir, "a.txt", "a1\n")
	write(t, dir, "b.txt", "b1\n")
	write(t, dir, "src/c.txt", "c1\n")
	write(t, dir, "keep.log", "committed\n")
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "add", "-f", "keep.log")
	userGit(t, dir, "commit", "-q", "-m", "first")
	write(t, dir, "a.txt", "a2 staged\n")
	write(t, dir, "b.txt", "b2 staged\n")
	write(t, dir, "forced.log", "added with -f\n")
	write(t, dir, "debug.log", "ignored\n")
	past := time.Now().Add(-time.Hour)
	for _, p := range []string{".gitignore", "a.txt", "b.txt", "src/c.txt", "keep.log", "forced.log", "debug.log"} {
		os.Chtimes(filepath.Join(dir, p), past, past)
	}
	userGit(t, dir, "add", "a.txt", "b.txt")
	userGit(t, dir, "add", "-f", "forced.log")
	userGit(t, dir, "update-index", "-q", "--refresh") // the times moved
	write(t, dir, "a.txt", "a3 unstaged\n")
	return dir
}

// snapshotHolds checks the snapshot's files against want (path →
// content, "" for a path it must not hold).
func snapshotHolds(t *testing.T, r *Repo, s Snapshot, want map[string]string) {
	t.Helper()
	for p, content := range want {
		got, err := r.ReadFile(context.Background(), s.Name, p)
		switch {
		case content == "" && err == nil:
			t.Errorf("the snapshot holds %s (%q)", p, got)
		case content != "" && err != nil:
			t.Errorf("the snapshot lacks %s: %v", p, err)
		case content != "" && string(got) != content:
			t.Errorf("the snapshot's %s = %q, want %q", p, got, content)
		}
	}
}

// TestSeedFromUserIndexIsExact: whatever the user's index is like, the
// first snapshot holds the working tree as git add -A would stage it,
// and the user's index is not changed by a byte.
func TestSeedFromUserIndexIsExact(t *testing.T) {
	cases := []struct {
		name  string
		shape func(t *testing.T, dir string)
	}{
		{"plain", func(*testing.T, string) {}},
		{"version 4", func(t *testing.T, dir string) { userGit(t, dir, "update-index", "--index-version", "4") }},
		// git status skips these entries: a copy of the index would
		// keep the staged content where the working tree has other.
		{"skip-worktree", func(t *testing.T, dir string) { userGit(t, dir, "update-index", "--skip-worktree", "a.txt") }},
		{"assume-unchanged", func(t *testing.T, dir string) { userGit(t, dir, "update-index", "--assume-unchanged", "a.txt") }},
		{"split", func(t *testing.T, dir string) { userGit(t, dir, "update-index", "--split-index") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := seededRepo(t)
			c.shape(t, dir)
			before := userState(t, dir)
			r := open(t, dir)
			s, err := r.Save(context.Background(), TaskPre(1), "")
			if err != nil {
				t.Fatal(err)
			}
			forced := "added with -f\n"
			if strings.Contains(c.name, "skip") || strings.Contains(c.name, "assume") || c.name == "split" {
				forced = "" // seeded from HEAD: not tracked there, and ignored
			}
			snapshotHolds(t, r, s, map[string]string{
				"a.txt": "a3 unstaged\n", "b.txt": "b2 staged\n", "src/c.txt": "c1\n",
				"keep.log": "committed\n", "forced.log": forced, "debug.log": "",
			})
			want := 3 // a.txt, b.txt, forced.log
			if forced == "" {
				want = 2
			}
			if n, err := r.Uncommitted(context.Background(), s); err != nil || n != want {
				t.Errorf("Uncommitted = %d, %v; want %d", n, err, want)
			}
			diffTrees(t, "the user's state", userState(t, dir), before)
		})
	}
}

// TestSeedFromUserIndexRehashesNothingUnchanged: a file the user's index
// vouches for is not read when the first snapshot is taken. A clean filter
// that logs each run shows which files git hashed.
func TestSeedFromUserIndexRehashesNothingUnchanged(t *testing.T) {
	dir := seededRepo(t)
	log := filepath.Join(t.TempDir(), "hashed")
	userGit(t, dir, "config", "filter.probe.clean", "echo %f >> '"+log+"'; cat")
	userGit(t, dir, "config", "filter.probe.smudge", "cat")
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), []byte("*.txt filter=probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	s, err := r.Save(context.Background(), TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	snapshotHolds(t, r, s, map[string]string{"a.txt": "a3 unstaged\n", "b.txt": "b2 staged\n", "src/c.txt": "c1\n"})
	b, _ := os.ReadFile(log)
	// a.txt changed since it was staged (git reads it to compare, then
	// to store it); b.txt and src/c.txt did not.
	got := strings.Fields(string(b))
	if len(got) == 0 || slices.ContainsFunc(got, func(f string) bool { return f != "a.txt" }) {
		t.Errorf("git hashed %q for the first snapshot, want a.txt only", got)
	}
}

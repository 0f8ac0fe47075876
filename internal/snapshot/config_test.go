package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// git reads the attributes and the repository's configuration once, as
// it starts: a change of them mid-task (a .gitattributes the agent
// writes, .git/config, info/attributes) reaches the iterations after it,
// whose trees hold what git add -A records, though a hash-object kept
// running from before would hash by the old ones.
func TestConfigChangeMidTask(t *testing.T) {
	ctx := context.Background()
	newFile := func(t *testing.T, dir string) []string {
		write(t, dir, "a.txt", "a\n")
		return []string{"a.txt"}
	}
	// The tree stays the private index's: buildTree's failure on
	// .gitattributes is staged on it, no whole read.
	sameContent := func(t *testing.T, dir string) []string {
		write(t, dir, "c.txt", "c\n")
		return []string{"c.txt"}
	}
	attributes := func(t *testing.T, dir string) []string {
		write(t, dir, ".gitattributes", "*.txt text eol=lf\n")
		return []string{".gitattributes"}
	}
	infoAttributes := func(t *testing.T, dir string) []string {
		gitDir := userGit(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
		write(t, filepath.Clean(gitDir[:len(gitDir)-1]), "info/attributes", "*.txt text eol=lf\n")
		return nil // not in the working tree
	}
	config := func(key, value string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			userGit(t, dir, "config", key, value)
			return nil
		}
	}
	crlf := func(t *testing.T, dir string) []string {
		write(t, dir, "b.txt", "crlf\r\nline\r\n")
		return []string{"b.txt"}
	}
	executable := func(t *testing.T, dir string) []string {
		if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return []string{"run.sh"}
	}
	type step func(t *testing.T, dir string) []string
	cases := []struct {
		name   string
		linked bool // the Repo is a linked worktree's
		// Iteration 1 starts the long-running gits, 2 changes how git
		// records files, 3 writes a file it records otherwise.
		steps [3]step
	}{
		{name: ".gitattributes after a tree built from the changed paths", steps: [3]step{newFile, attributes, crlf}},
		{name: ".gitattributes after a tree staged on the private index", steps: [3]step{sameContent, attributes, crlf}},
		{name: "core.autocrlf in .git/config", steps: [3]step{newFile, config("core.autocrlf", "input"), crlf}},
		{name: "core.autocrlf in a linked worktree's repository", linked: true, steps: [3]step{newFile, config("core.autocrlf", "input"), crlf}},
		{name: "info/attributes", steps: [3]step{newFile, infoAttributes, crlf}},
		{name: "core.fileMode off", steps: [3]step{newFile, config("core.fileMode", "false"), executable}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t)
			write(t, dir, "c.txt", "c\n")
			userGit(t, dir, "add", "-A")
			userGit(t, dir, "commit", "-q", "-m", "start")
			if tc.linked {
				wt := filepath.Join(t.TempDir(), "wt")
				userGit(t, dir, "worktree", "add", "-q", wt)
				dir = wt
			}
			r := open(t, dir)
			t.Cleanup(func() { _ = r.FlushIterations() })
			prev, err := r.SaveIteration(ctx, 1, 0, Changes{})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				paths := s(t, dir)
				tree, err := r.SaveIteration(ctx, 1, i+1, Changes{Known: true, Paths: paths, Since: prev})
				if err != nil {
					t.Fatal(err)
				}
				if want := referenceTree(t, dir); tree != want {
					t.Fatalf("iteration %d (%v): tree %s, git add -A gives %s\nbuilt: %s\ngit:   %s", i+1, paths, tree, want,
						userGit(t, dir, "ls-tree", "-r", tree), userGit(t, dir, "ls-tree", "-r", want))
				}
				prev = tree
			}
		})
	}
}

// While the repository's configuration files stay as they were, buildTree
// keeps its long-running hash-object from one iteration to the next.
func TestLongRunningGitKeptWhileConfigUnchanged(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "c.txt", "c\n")
	r, prev := startTask(t, dir)
	var hasher any
	for i, name := range []string{"a.txt", "b.txt", "src/d.txt"} {
		write(t, dir, name, name+"\n")
		var err error
		if prev, err = r.SaveIteration(ctx, 1, i+1, Changes{Known: true, Paths: []string{name}, Since: prev}); err != nil {
			t.Fatal(err)
		}
		if r.hasher == nil {
			t.Fatalf("iteration %d: no hash-object running", i+1)
		}
		if i > 0 && any(r.hasher) != hasher {
			t.Errorf("iteration %d started hash-object again, with the configuration unchanged", i+1)
		}
		hasher = r.hasher
	}
}

package stall

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// settledRepo is newRepo with every file's times an hour back and git's
// index refreshed after, so that git's stat check vouches for every
// tracked file (none is racily clean).
func settledRepo(t *testing.T, setup func(dir string)) string {
	t.Helper()
	dir := newRepo(t)
	if setup != nil {
		setup(dir)
	}
	past := time.Now().Add(-time.Hour)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, past, past)
		}
		return err
	})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "settled")
	return dir
}

// hashBoth returns the first Hash of a Tracker that may take digests
// from git's index, how many it took, and that of one that reads every
// file.
func hashBoth(t *testing.T, dir string) (fromIndex string, n int, read string) {
	t.Helper()
	ctx := context.Background()
	a := NewTracker(dir, skipLikeEngine, nil)
	defer a.Close()
	ha, err := a.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := NewTracker(dir, skipLikeEngine, nil)
	b.noIndex = true
	defer b.Close()
	hb, err := b.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ha, a.fromIndexCount, hb
}

// TestFirstWalkTakesUnchangedFilesFromGitsIndex: the files git's index
// vouches for are not read, and the hash is the one reading them gives.
func TestFirstWalkTakesUnchangedFilesFromGitsIndex(t *testing.T) {
	dir := settledRepo(t, nil)
	// Tracked and unchanged: 12 sources, README, .gitignore, keep.log.
	const tracked = 15
	h, n, want := hashBoth(t, dir)
	if n != tracked {
		t.Errorf("%d digests taken from the index, want %d", n, tracked)
	}
	if h != want {
		t.Error("the hash with digests from the index differs from the one reading every file")
	}

	// A changed file (same size, its time put back) and a new one are
	// read; a staged change is not (the index has its content's id); the
	// hash still equals reading all.
	p := filepath.Join(dir, "src/p0/f0.go")
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("package pX\n"), 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	writeFile(t, dir, "src/new.go", "package src\n")
	writeFile(t, dir, "README", "staged\n")
	// Written well before the index, so git's racy rule, which the walk
	// follows, does not make it read README again on a loaded machine.
	past := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(dir, "README"), past, past)
	runGit(t, dir, "add", "README")
	h, n, want = hashBoth(t, dir)
	if n != tracked-1 {
		t.Errorf("%d digests taken from the index after changing one file, want %d", n, tracked-1)
	}
	if h != want {
		t.Error("after changes, the hash with digests from the index differs from the one reading every file")
	}
}

// TestRestoredFileHashesAsGitsIndex: a file read again after the first
// walk took its digest from git's index hashes the same way, so putting
// its content back gives the first hash back.
func TestRestoredFileHashesAsGitsIndex(t *testing.T) {
	dir := settledRepo(t, nil)
	tr := NewTracker(dir, skipLikeEngine, nil)
	defer tr.Close()
	ctx := context.Background()
	first, err := tr.Hash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.fromIndexCount == 0 {
		t.Fatal("no digest was taken from the index")
	}
	for i, content := range []string{"package p1\n// changed\n", "package p1\n"} {
		writeFile(t, dir, "src/p1/f1.go", content)
		h, err := tr.Hash(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if changed := i == 0; (h != first) != changed {
			t.Errorf("step %d: hash changed = %v, want %v", i, h != first, changed)
		}
	}
	if err := os.Remove(filepath.Join(dir, "README")); err != nil {
		t.Fatal(err)
	}
	tr.Hash(ctx)
	writeFile(t, dir, "README", "readme\n")
	if h, _ := tr.Hash(ctx); h != first {
		t.Error("a file deleted and written back as it was changed the hash")
	}
}

// TestFirstWalkReadsWhatGitConverts: where git converts content as it
// hashes it, its blob id is not the content's, and the file is read.
func TestFirstWalkReadsWhatGitConverts(t *testing.T) {
	const tracked = 15 // settledRepo's, before the case's own
	cases := []struct {
		name      string
		setup     func(t *testing.T, dir string)
		untracked bool // .gitattributes taken out of the index after
		max       int  // digests the index may give at most
	}{
		{"a .gitattributes text rule", func(t *testing.T, dir string) {
			writeFile(t, dir, ".gitattributes", "*.txt text eol=lf\n")
			writeFile(t, dir, "dos.txt", "one\r\ntwo\r\n")
		}, false, tracked + 1}, // dos.txt is read
		{"a filter", func(t *testing.T, dir string) {
			runGit(t, dir, "config", "filter.up.clean", "tr a-z A-Z")
			runGit(t, dir, "config", "filter.up.smudge", "cat")
			writeFile(t, dir, ".gitattributes", "*.go filter=up\n")
		}, false, tracked + 1 - 12}, // the 12 .go files are read
		{"an untracked .gitattributes", func(t *testing.T, dir string) {
			runGit(t, dir, "config", "filter.up.clean", "tr a-z A-Z")
			runGit(t, dir, "config", "filter.up.smudge", "cat")
			writeFile(t, dir, ".gitattributes", "*.go filter=up\n")
		}, true, tracked - 12},
		{"core.autocrlf", func(t *testing.T, dir string) {
			runGit(t, dir, "config", "core.autocrlf", "true")
			writeFile(t, dir, "dos.txt", "one\r\ntwo\r\n")
		}, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := settledRepo(t, func(dir string) { c.setup(t, dir) })
			if c.untracked {
				runGit(t, dir, "rm", "-q", "--cached", ".gitattributes")
			}
			h, n, want := hashBoth(t, dir)
			if h != want {
				t.Errorf("the hash with digests from the index differs from the one reading every file (%d taken)", n)
			}
			if n > c.max {
				t.Errorf("%d digests taken from the index, want at most %d", n, c.max)
			}
		})
	}
}

// TestFirstWalkFindsTheRightIndex: a Tracker of a subdirectory, or of a
// linked worktree, takes its digests from the index of the tree it is in;
// one whose index is split reads every file.
func TestFirstWalkFindsTheRightIndex(t *testing.T) {
	cases := []struct {
		name string
		dir  func(t *testing.T, repo string) string
		want int // digests taken from the index
	}{
		{"a subdirectory", func(t *testing.T, repo string) string { return filepath.Join(repo, "src") }, 12},
		{"a linked worktree", func(t *testing.T, repo string) string {
			wt := filepath.Join(t.TempDir(), "wt")
			runGit(t, repo, "worktree", "add", "-q", wt)
			// Its files are new: settle them as settledRepo does.
			past := time.Now().Add(-time.Hour)
			filepath.WalkDir(wt, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					os.Chtimes(p, past, past)
				}
				return err
			})
			runGit(t, wt, "update-index", "-q", "--refresh")
			return wt
		}, 15},
		{"a split index", func(t *testing.T, repo string) string {
			runGit(t, repo, "update-index", "--split-index")
			return repo
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir(t, settledRepo(t, nil))
			h, n, want := hashBoth(t, dir)
			if h != want {
				t.Error("the hash with digests from the index differs from the one reading every file")
			}
			if n != c.want {
				t.Errorf("%d digests taken from the index, want %d", n, c.want)
			}
		})
	}
}

package stall

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// refresh brings a split private index (as ralph's snapshots keep one)
// up to date with the tree at dir, as a snapshot's stage does, less the
// pathspecs in exclude, and returns it as a RefreshedIndex.
func refresh(t *testing.T, dir string, exclude ...string) *RefreshedIndex {
	t.Helper()
	index := filepath.Join(dir, ".git", "ralph", "index")
	os.MkdirAll(filepath.Dir(index), 0o755)
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "core.splitIndex=true"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := os.Stat(index); err != nil {
		git("read-tree", "HEAD") // seeded, as the snapshots seed theirs
	}
	args := []string{"add", "-A", "--", "."}
	for _, p := range exclude {
		args = append(args, ":(exclude)"+p)
	}
	git(args...)
	return &RefreshedIndex{Path: index, GitDir: filepath.Join(dir, ".git")}
}

func refreshAll(t *testing.T, dir string) bool { refresh(t, dir); return true }

// indexAt is where refresh keeps the index of dir.
func indexAt(dir string) RefreshedIndex {
	return RefreshedIndex{Path: filepath.Join(dir, ".git", "ralph", "index"), GitDir: filepath.Join(dir, ".git")}
}

// startWith starts a Tracker of dir whose first walk awaits the index
// refresh keeps, and is told what hand returns, called once the walk
// watches every directory (where a snapshot of the tree would be taken);
// it returns the Tracker, its first hash and how many files it took from
// the index.
func startWith(t *testing.T, dir string, hand func() bool) (*Tracker, string, int) {
	t.Helper()
	return startSkipping(t, dir, skipLikeEngine, indexAt(dir), hand)
}

// startSkipping is startWith with the Tracker's skip and the index.
func startSkipping(t *testing.T, dir string, skip func(string) bool, where RefreshedIndex, hand func() bool) (*Tracker, string, int) {
	t.Helper()
	tr := NewTracker(dir, skip, nil)
	t.Cleanup(func() { tr.Close() })
	offer := tr.AwaitIndex(where)
	h, err := tr.Start(context.Background(), func() { offer(hand()) })
	if err != nil {
		t.Fatal(err)
	}
	return tr, h, tr.fromRefreshedCount
}

// readAll is the first hash of a Tracker that reads every file.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	tr := NewTracker(dir, skipLikeEngine, nil)
	tr.noIndex = true
	defer tr.Close()
	h, err := tr.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestFirstWalkTakesFilesFromARefreshedIndex: every file the walk lists
// that git just refreshed in the index handed over is taken from it,
// untracked ones included, and the hash is the one reading them gives;
// what changes after the refresh is seen on the next Hash.
func TestFirstWalkTakesFilesFromARefreshedIndex(t *testing.T) {
	dir := newRepo(t)
	// Fresh and untracked, as a task's tree may be: git's own index
	// vouches for none of it.
	writeFile(t, dir, "src/new.go", "package src\n")
	writeFile(t, dir, "src/p1/f1.go", "package p1 // changed\n")
	os.Chmod(filepath.Join(dir, "README"), 0o755)
	os.Symlink("README", filepath.Join(dir, "link"))
	const files = 12 + 1 + 1 + 1 + 1 + 1 // sources, README, .gitignore, keep.log, new.go, link
	tr, h, n := startWith(t, dir, func() bool { return refreshAll(t, dir) })
	if n != files {
		t.Errorf("%d files taken from the refreshed index, want %d", n, files)
	}
	if want := readAll(t, dir); h != want {
		t.Fatal("the hash from the refreshed index differs from the one reading every file")
	}

	// Changed after git's refresh, in the window before the first Hash
	// returns and after: the kernel reports both.
	tr2, _, _ := startWith(t, dir, func() bool {
		refresh(t, dir)
		writeFile(t, dir, "src/p0/f0.go", "package p0 // after the refresh\n")
		os.Remove(filepath.Join(dir, "src/p2/f2.go"))
		return true
	})
	writeFile(t, dir, "src/p1/f4.go", "package p1 // after the first hash\n")
	h2, err := tr2.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := readAll(t, dir); h2 != want {
		t.Error("changes after the refresh are missing from the next hash")
	}
	if h, _ := tr.Hash(context.Background()); h != h2 {
		t.Error("two Trackers of the same tree disagree")
	}
}

// TestRefreshedIndexNotUsed: an index not handed over, one whose entries
// git keeps whatever the executable bit, and one where attributes make
// git convert content leave the files (all, or those converted) to be
// examined, and the hash right.
func TestRefreshedIndexNotUsed(t *testing.T) {
	cases := []struct {
		name       string
		setup      func(t *testing.T, dir string)
		sharedGone bool
		hand       func(t *testing.T, dir string) bool
		max        int
	}{
		{"not refreshed", nil, false, func(*testing.T, string) bool { return false }, 0},
		{"a shared part gone", nil, true, refreshAll, 0},
		{"core.fileMode false", func(t *testing.T, dir string) {
			runGit(t, dir, "config", "core.fileMode", "false")
		}, false, refreshAll, 0},
		{"a filter on the sources", func(t *testing.T, dir string) {
			runGit(t, dir, "config", "filter.up.clean", "tr a-z A-Z")
			runGit(t, dir, "config", "filter.up.smudge", "cat")
			writeFile(t, dir, ".gitattributes", "*.go filter=up\n")
		}, false, refreshAll, 4}, // README, .gitignore, keep.log, .gitattributes
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := newRepo(t)
			if c.setup != nil {
				c.setup(t, dir)
			}
			where := indexAt(dir)
			if c.sharedGone {
				where.GitDir = t.TempDir()
			}
			_, h, n := startSkipping(t, dir, skipLikeEngine, where, func() bool { return c.hand(t, dir) })
			if n > c.max {
				t.Errorf("%d files taken from the index, want at most %d", n, c.max)
			}
			if want := readAll(t, dir); h != want {
				t.Error("the hash differs from the one reading every file")
			}
		})
	}
}

// TestRefreshedIndexStaleEntries: an entry the index's owner says git was
// not asked to refresh is examined, not taken.
func TestRefreshedIndexStaleEntries(t *testing.T) {
	dir := newRepo(t)
	refresh(t, dir)
	// README changes before the walk starts watching, and the refresh
	// leaves it out: its entry holds the old content.
	writeFile(t, dir, "README", "changed before the walk\n")
	where := indexAt(dir)
	where.Stale = func(rel string) bool { return rel == "README" }
	_, h, n := startSkipping(t, dir, skipLikeEngine, where, func() bool {
		refresh(t, dir, "README")
		return true
	})
	if want := readAll(t, dir); h != want {
		t.Error("a stale entry was taken: the hash differs from the one reading every file")
	}
	if n != 14 {
		t.Errorf("%d files taken, want 14 (all but README)", n)
	}
}

// TestLevelWalkIgnoresWhatTheListingDoes: the walk that awaits a refreshed
// index asks git about each level's directories instead of listing every
// ignored path first; it watches, hashes and leaves out exactly what the
// listing walk does, on a tree with each shape git ignores: a directory a
// pattern matches, nested; one a pattern matches that holds a tracked
// file (walked, its ignored parts not); ignored files beside tracked
// ones; a directory skip leaves out that git ignores and one it does not;
// a nested repository.
func TestLevelWalkIgnoresWhatTheListingDoes(t *testing.T) {
	dir := newRepo(t)
	writeFile(t, dir, ".gitignore", "build/\n*.log\ngen/\n.cache/\n*.o\nlogs/\n")
	writeFile(t, dir, "build/a/b/c.bin", "x")
	writeFile(t, dir, "src/deep/er/still/f.go", "package still\n")
	writeFile(t, dir, "src/deep/er/x.o", "obj")
	writeFile(t, dir, "gen/keep.go", "package gen\n")
	runGit(t, dir, "add", "-f", "gen/keep.go")
	runGit(t, dir, "commit", "-q", "-am", "shapes")
	writeFile(t, dir, "gen/out.go", "package gen // generated\n")
	writeFile(t, dir, "gen/sub/more.go", "package sub\n")
	writeFile(t, dir, ".cache/c", "cached")
	// A directory skip leaves out whose pattern git applies, but that
	// holds a tracked file: blind, as git does not ignore it whole.
	writeFile(t, dir, "logs/tracked.txt", "kept")
	writeFile(t, dir, "logs/x.log", "log")
	runGit(t, dir, "add", "-f", "logs/tracked.txt")
	runGit(t, dir, "commit", "-q", "-m", "a tracked log")
	// A nested repository, untracked, with an ignored-looking file and a
	// leaf directory of its own; and a submodule, registered, whose
	// .git is a file.
	writeFile(t, dir, "vendor/other/lib.go", "package other\n")
	writeFile(t, dir, "vendor/other/x.log", "its own\n")
	writeFile(t, dir, "vendor/other/d/y.go", "package d\n")
	runGit(t, filepath.Join(dir, "vendor/other"), "init", "-q")
	runGit(t, filepath.Join(dir, "vendor/other"), "commit", "-q", "--allow-empty", "-m", "other")
	sub := filepath.Join(t.TempDir(), "sub")
	os.MkdirAll(sub, 0o755)
	runGit(t, sub, "init", "-q")
	writeFile(t, sub, "a.go", "package sub\n")
	writeFile(t, sub, "deep/b.go", "package deep\n")
	runGit(t, sub, "add", "-A")
	runGit(t, sub, "commit", "-q", "-m", "sub")
	runGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mods/sub")
	runGit(t, dir, "commit", "-q", "-m", "a submodule")
	writeFile(t, dir, "untracked.txt", "new\n")

	skip := func(rel string) bool { return skipLikeEngine(rel) || rel == "logs" || strings.HasPrefix(rel, "logs/") }
	listing := NewTracker(dir, skip, nil)
	defer listing.Close()
	want, err := listing.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, hand := range []string{"a refreshed index", "none"} {
		t.Run(hand, func(t *testing.T) {
			tr, h, _ := startSkipping(t, dir, skip, indexAt(dir), func() bool {
				return hand != "none" && refreshAll(t, dir)
			})
			if h != want {
				t.Error("the hash differs from the listing walk's")
			}
			if got, want := fmt.Sprint(slices.Sorted(maps.Keys(tr.w.dirs))), fmt.Sprint(slices.Sorted(maps.Keys(listing.w.dirs))); got != want {
				t.Errorf("watched directories\n got %s\nwant %s", got, want)
			}
			if got, want := fmt.Sprint(slices.Sorted(maps.Keys(tr.files))), fmt.Sprint(slices.Sorted(maps.Keys(listing.files))); got != want {
				t.Errorf("files hashed\n got %s\nwant %s", got, want)
			}
			if tr.walk {
				t.Error("the Tracker fell back to walking the whole tree each time")
			}
			if got, want := fmt.Sprint(tr.blind), fmt.Sprint(listing.blind); got != want {
				t.Errorf("directories left out that git does not ignore: got %s, want %s", got, want)
			}
			for _, p := range []string{"build", "gen/sub", "gen/out.go", "src/deep/er/x.o", "src/debug.log"} {
				if !tr.ignored[p] {
					t.Errorf("%s is not noted as ignored", p)
				}
			}
			// A change in the directory that holds a tracked file is
			// seen; one in the ignored part of it is not.
			writeFile(t, dir, "gen/keep.go", "package gen // changed\n")
			writeFile(t, dir, "gen/sub/more.go", "package sub // changed\n")
			h2, err := tr.Hash(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if h2 == h {
				t.Error("a change to a tracked file in a matched directory was not seen")
			}
			writeFile(t, dir, "gen/keep.go", "package gen\n")
			if h3, _ := tr.Hash(context.Background()); h3 != h {
				t.Error("putting the tracked file back did not give the first hash back: the ignored change counted")
			}
		})
	}
}

// TestLeavesTakenFromTheIndex: directories without subdirectories are
// watched, not read, and their files come from the refreshed index:
// tracked, changed, untracked and new ones, less the ignored; files a
// leaf gains or loses after git's refresh are seen on the next Hash.
func TestLeavesTakenFromTheIndex(t *testing.T) {
	dir := newRepo(t)
	f, err := os.Open(filepath.Join(dir, "src", "p0"))
	if err != nil {
		t.Fatal(err)
	}
	leaf := leafDir(f)
	f.Close()
	writeFile(t, dir, "src/p0/untracked.go", "package p0 // new\n")
	writeFile(t, dir, "src/p0/ignored.log", "log")
	writeFile(t, dir, "src/p1/f1.go", "package p1 // changed\n")
	tr, h, n := startWith(t, dir, func() bool { return refreshAll(t, dir) })
	if want := readAll(t, dir); h != want {
		t.Error("the hash differs from the one reading every file")
	}
	if leaf && tr.leafCount != 3 {
		t.Errorf("%d directories not read, want the 3 without subdirectories, as this file system keeps link counts", tr.leafCount)
	}
	// All but the ignored log: the 12 sources, README, .gitignore,
	// keep.log and the untracked one.
	if n != 16 {
		t.Errorf("%d files taken from the index, want 16", n)
	}
	writeFile(t, dir, "src/p2/later.go", "package p2 // after\n")
	os.Remove(filepath.Join(dir, "src/p0/f3.go"))
	h2, err := tr.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := readAll(t, dir); h2 != want {
		t.Error("a file a leaf gained or lost after the refresh is missing from the next hash")
	}
}

// TestRefreshedIndexDisagreesWithGits: the snapshots' index is not git's
// own, and where they disagree on what git tracks, git's rules decide, as
// for the listing walk: a file the snapshots staged before a .gitignore
// named it is left out; one the user force-added since the snapshots'
// index was made is hashed; and an executable bit only the group has is
// no executable, as git records it.
func TestRefreshedIndexDisagreesWithGits(t *testing.T) {
	dir := newRepo(t)
	writeFile(t, dir, "src/p0/gen.txt", "generated\n")
	refresh(t, dir) // the snapshots stage it
	writeFile(t, dir, ".gitignore", "build/\n*.log\n*.txt\n")
	writeFile(t, dir, "src/p1/local.log", "forced\n")
	runGit(t, dir, "add", "-f", "src/p1/local.log")
	writeFile(t, dir, "src/p2/group.sh", "#!/bin/sh\n")
	os.Chmod(filepath.Join(dir, "src/p2/group.sh"), 0o654)
	runGit(t, dir, "add", "src/p2/group.sh")

	listing := NewTracker(dir, skipLikeEngine, nil)
	defer listing.Close()
	want, err := listing.Hash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr, h, _ := startWith(t, dir, func() bool { return refreshAll(t, dir) })
	if got, want := fmt.Sprint(slices.Sorted(maps.Keys(tr.files))), fmt.Sprint(slices.Sorted(maps.Keys(listing.files))); got != want {
		t.Errorf("files hashed\n got %s\nwant %s", got, want)
	}
	if h != want {
		t.Error("the hash differs from the listing walk's")
	}
	if h2, _ := tr.Hash(context.Background()); h2 != h {
		t.Error("the hash changed with nothing changed: a file's kind differs between the index and a read")
	}
}

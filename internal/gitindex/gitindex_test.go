package gitindex

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// repo makes a repository with files in nested directories, one
// executable, one symlink and long and short names, committed, with
// their times an hour in the past so that no entry is racily clean.
func repo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	files := map[string]string{
		"a.txt": "a\n", "b/c.go": "package b\n", "b/d/e.go": "package d\n",
		"b/d/" + strings.Repeat("long", 30) + ".txt": "long\n", "run.sh": "#!/bin/sh\n", "z": "",
	}
	past := time.Now().Add(-time.Hour)
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(full, past, past)
	}
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

// lsFiles is `git ls-files -s` as entries: path → "mode id stage".
func lsFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for line := range strings.Lines(git(t, dir, "ls-files", "-s")) {
		meta, path, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		m[path+" "+strings.Fields(meta)[2]] = meta
	}
	return m
}

func asLsFiles(ix *Index) map[string]string {
	m := map[string]string{}
	for _, e := range ix.Entries {
		m[fmt.Sprintf("%s %d", e.Path, e.Stage)] = fmt.Sprintf("%06o %s %d", e.Mode, hex.EncodeToString(e.ID[:]), e.Stage)
	}
	return m
}

// TestReadsWhatGitWrote parses indexes git wrote in each version and
// shape and checks them against git ls-files -s.
func TestReadsWhatGitWrote(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		plain bool
	}{
		{"version 2", func(t *testing.T, dir string) { git(t, dir, "update-index", "--index-version", "2") }, true},
		{"version 3 (an intent-to-add entry)", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644)
			git(t, dir, "add", "-N", "new.txt")
			git(t, dir, "update-index", "--index-version", "3")
		}, true},
		{"version 4", func(t *testing.T, dir string) { git(t, dir, "update-index", "--index-version", "4") }, true},
		{"skip-worktree", func(t *testing.T, dir string) { git(t, dir, "update-index", "--skip-worktree", "a.txt") }, false},
		{"assume-unchanged", func(t *testing.T, dir string) { git(t, dir, "update-index", "--assume-unchanged", "b/c.go") }, false},
		{"conflict", func(t *testing.T, dir string) {
			git(t, dir, "checkout", "-q", "-b", "other")
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("other\n"), 0o644)
			git(t, dir, "commit", "-q", "-am", "other")
			git(t, dir, "checkout", "-q", "-")
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("mine\n"), 0o644)
			git(t, dir, "commit", "-q", "-am", "mine")
			cmd := exec.Command("git", "merge", "-q", "other")
			cmd.Dir = dir
			cmd.Run() // fails with the conflict
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t)
			c.setup(t, dir)
			f, err := Read(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			want, got := lsFiles(t, dir), asLsFiles(f.Index)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("entries\n got %v\nwant %v", got, want)
			}
			if f.Plain() != c.plain {
				t.Errorf("Plain() = %v, want %v", f.Plain(), c.plain)
			}
		})
	}
}

func TestSplitIndexIsNotWhole(t *testing.T) {
	dir := repo(t)
	git(t, dir, "update-index", "--split-index")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644)
	git(t, dir, "add", "a.txt")
	f, err := Read(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Split || f.Plain() {
		t.Errorf("Split = %v, Plain() = %v for a split index", f.Split, f.Plain())
	}
}

// TestUnchanged holds the stat check to what changes a file.
func TestUnchanged(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   map[string]bool // path → Unchanged
	}{
		{"nothing", func(*testing.T, string) {}, map[string]bool{"a.txt": true, "b/c.go": true, "link": true, "run.sh": true}},
		{"rewritten, same size, time kept", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "a.txt")
			fi, _ := os.Stat(p)
			os.WriteFile(p, []byte("b\n"), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime()) // the change time still moves
		}, map[string]bool{"a.txt": false, "b/c.go": true}},
		{"grown", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "b/c.go"), []byte("package b // more\n"), 0o644)
		}, map[string]bool{"b/c.go": false, "a.txt": true}},
		{"replaced by a symlink", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a.txt"))
			os.Symlink("z", filepath.Join(dir, "a.txt"))
		}, map[string]bool{"a.txt": false}},
		{"skip-worktree", func(t *testing.T, dir string) {
			git(t, dir, "update-index", "--skip-worktree", "a.txt")
		}, map[string]bool{"a.txt": false, "b/c.go": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t)
			git(t, dir, "status", "-s") // refresh: the index now postdates every file
			c.change(t, dir)
			f, err := Read(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range f.Entries {
				want, ok := c.want[e.Path]
				if !ok {
					continue
				}
				fi, err := os.Lstat(filepath.Join(dir, e.Path))
				if err != nil {
					t.Fatal(err)
				}
				if got := e.Unchanged(fi, f.ModTime); got != want {
					t.Errorf("%s: Unchanged = %v, want %v", e.Path, got, want)
				}
			}
		})
	}
}

// TestRacyEntryIsNotTrusted: a file modified no earlier than the index
// was written may have changed within the same clock tick.
func TestRacyEntryIsNotTrusted(t *testing.T) {
	dir := repo(t)
	f, err := Read(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries {
		if e.Path != "a.txt" {
			continue
		}
		fi, _ := os.Lstat(filepath.Join(dir, e.Path))
		if !e.Unchanged(fi, f.ModTime) {
			t.Fatal("a.txt is not unchanged to begin with")
		}
		if e.Unchanged(fi, fi.ModTime()) {
			t.Error("an entry as new as the index is trusted")
		}
	}
}

func TestParseRejects(t *testing.T) {
	dir := repo(t)
	good, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[20] ^= 1
	for name, data := range map[string][]byte{
		"empty": nil, "not an index": []byte(strings.Repeat("x", 64)),
		"bad checksum": flipped, "cut short": good[:len(good)/2],
	} {
		if _, err := Parse(data); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	dir := repo(f)
	for _, v := range []string{"2", "3", "4"} {
		git(f, dir, "update-index", "--index-version", v)
		data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		// The same without its checksum, so that mutations get past it.
		zeroed := append([]byte(nil), data...)
		clear(zeroed[len(zeroed)-20:])
		f.Add(zeroed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := Parse(data)
		if err != nil {
			return
		}
		for _, e := range ix.Entries {
			if (e.Path == "" && !ix.Split) || e.Stage > 3 {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}

// TestTreeIsWhatWriteTreeWrites holds Index.Tree to git: known, and the
// tree git write-tree writes, while git keeps its cache tree whole;
// unknown once a change to the index takes it away.
func TestTreeIsWhatWriteTreeWrites(t *testing.T) {
	change := func(t *testing.T, dir string) {
		os.WriteFile(filepath.Join(dir, "b", "d", "e.go"), []byte("package e\n"), 0o644)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		known bool
	}{
		{"after a commit", func(t *testing.T, dir string) {}, true},
		{"version 4", func(t *testing.T, dir string) { git(t, dir, "update-index", "--index-version", "4") }, true},
		{"a file staged since", func(t *testing.T, dir string) {
			change(t, dir)
			git(t, dir, "add", "b/d/e.go")
		}, false},
		{"a file staged, then write-tree", func(t *testing.T, dir string) {
			change(t, dir)
			git(t, dir, "add", "b/d/e.go")
			git(t, dir, "write-tree")
		}, true},
		{"refreshed by git status", func(t *testing.T, dir string) {
			now := time.Now()
			os.Chtimes(filepath.Join(dir, "a.txt"), now, now)
			git(t, dir, "status", "--porcelain")
		}, true},
		{"split, a file staged, then write-tree", func(t *testing.T, dir string) {
			git(t, dir, "update-index", "--split-index")
			change(t, dir)
			git(t, dir, "add", "b/d/e.go")
			git(t, dir, "write-tree")
		}, true},
		{"split, a file removed since", func(t *testing.T, dir string) {
			git(t, dir, "update-index", "--split-index")
			git(t, dir, "rm", "-q", "--cached", "z")
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t)
			c.setup(t, dir)
			f, err := Read(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			if f.TreeKnown != c.known {
				t.Fatalf("TreeKnown = %v, want %v", f.TreeKnown, c.known)
			}
			if !c.known {
				return
			}
			want := strings.TrimSpace(git(t, dir, "write-tree"))
			if got := hex.EncodeToString(f.Tree[:]); got != want {
				t.Errorf("Tree = %s, git write-tree wrote %s", got, want)
			}
		})
	}
}

func TestCacheTreeRoot(t *testing.T) {
	id := strings.Repeat("\x01", 20)
	cases := []struct {
		name string
		ext  string
		ok   bool
	}{
		{"valid", "\x0012 2\n" + id, true},
		{"invalidated", "\x00-1 2\n", false},
		{"invalidated, an id after all", "\x00-1 2\n" + id, false},
		{"id cut short", "\x0012 2\n" + id[:19], false},
		{"no path", "12 2\n" + id, false},
		{"a subtree's path first", "b\x0012 2\n" + id, false},
		{"no count", "\x00 2\n" + id, false},
		{"no newline", "\x0012 2" + id, false},
		{"empty", "", false},
	}
	for _, c := range cases {
		got, ok := cacheTreeRoot([]byte(c.ext))
		if ok != c.ok || (ok && string(got[:]) != id) {
			t.Errorf("%s: cacheTreeRoot = %x, %v; want ok %v", c.name, got, ok, c.ok)
		}
	}
}

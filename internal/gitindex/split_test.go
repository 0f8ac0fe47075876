package gitindex

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// splitRepo is repo with its index split, then changed the ways that
// leave entries in the small part: a file changed (a replaced entry), a
// file removed (a deleted one), files added (added ones), one of them
// sorting before every shared entry and one after.
func splitRepo(t testing.TB, version string) string {
	t.Helper()
	dir := repo(t)
	git(t, dir, "update-index", "--index-version", version)
	git(t, dir, "update-index", "--split-index")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644)
	os.Remove(filepath.Join(dir, "b/c.go"))
	os.WriteFile(filepath.Join(dir, "0first.txt"), []byte("first\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b/d/new.go"), []byte("package d // new\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "zz.txt"), []byte("last\n"), 0o644)
	// However much changed, the shared part stays (git rewrites it when
	// more than 20% of the entries changed, by default).
	git(t, dir, "-c", "splitIndex.maxPercentChange=100", "add", "-A")
	return dir
}

// sharedPart is the path of the shared index dir's split index names.
func sharedPart(t testing.TB, dir string) string {
	t.Helper()
	small, err := Read(filepath.Join(dir, ".git", "index"))
	if err != nil || !small.Split {
		t.Fatalf("not a split index: %v", err)
	}
	return filepath.Join(dir, ".git", "sharedindex."+hex.EncodeToString(small.link.shared[:]))
}

// TestReadWholeMergesTheSharedIndex reads split indexes git wrote, in each
// version, and checks them against git ls-files -s.
func TestReadWholeMergesTheSharedIndex(t *testing.T) {
	for _, v := range []string{"2", "3", "4"} {
		t.Run("version "+v, func(t *testing.T) {
			dir := splitRepo(t, v)
			small, err := Read(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			replaced, _ := ewahBits(small.link.replaced, 1<<20)
			deleted, _ := ewahBits(small.link.deleted, 1<<20)
			if !small.Split || len(replaced) == 0 || len(deleted) == 0 || len(small.Entries) <= len(replaced) {
				t.Fatalf("the small part does not replace, delete and add: %d entries, replaced %v, deleted %v", len(small.Entries), replaced, deleted)
			}
			f, err := ReadWhole(filepath.Join(dir, ".git", "index"), filepath.Join(dir, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			want, got := lsFiles(t, dir), asLsFiles(f.Index)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("entries\n got %v\nwant %v", got, want)
			}
			if f.Split || !f.Plain() {
				t.Errorf("Split = %v, Plain() = %v after the merge", f.Split, f.Plain())
			}
			for i := 1; i < len(f.Entries); i++ {
				if f.Entries[i-1].Path >= f.Entries[i].Path {
					t.Errorf("entries out of order: %q before %q", f.Entries[i-1].Path, f.Entries[i].Path)
				}
			}
			// The changed file's entry carries its new stat data.
			fi, err := os.Lstat(filepath.Join(dir, "a.txt"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range f.Entries {
				if e.Path == "a.txt" && int64(e.Size) != fi.Size() {
					t.Errorf("a.txt: size %d in the index, %d on disk", e.Size, fi.Size())
				}
			}
		})
	}
}

// TestReadWholeOfAPrivateIndex reads a split index kept outside the git
// directory's own index file (as ralph's snapshots keep theirs), whose
// shared part git writes to the git directory.
func TestReadWholeOfAPrivateIndex(t *testing.T) {
	dir := repo(t)
	index := filepath.Join(dir, ".git", "ralph", "index")
	os.MkdirAll(filepath.Dir(index), 0o755)
	t.Setenv("GIT_INDEX_FILE", index)
	git(t, dir, "-c", "core.splitIndex=true", "read-tree", "HEAD")
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\necho\n"), 0o755)
	git(t, dir, "-c", "core.splitIndex=true", "add", "-A")
	f, err := ReadWhole(index, filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	if want, got := lsFiles(t, dir), asLsFiles(f.Index); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries\n got %v\nwant %v", got, want)
	}
}

// TestReadWholeRefuses covers a shared part that is gone or is not the
// one the link names.
func TestReadWholeRefuses(t *testing.T) {
	dir := splitRepo(t, "2")
	gitDir := filepath.Join(dir, ".git")
	shared := sharedPart(t, dir)
	other := t.TempDir()
	if _, err := ReadWhole(filepath.Join(gitDir, "index"), other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("shared part missing: %v, want not-exist", err)
	}
	// Another index under the shared part's name.
	data, err := os.ReadFile(filepath.Join(repo(t), ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, filepath.Base(shared)), data, 0o644)
	if _, err := ReadWhole(filepath.Join(gitDir, "index"), other); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("another shared part: %v, want a checksum error", err)
	}
	// A plain index is read as Read reads it.
	plain := repo(t)
	f, err := ReadWhole(filepath.Join(plain, ".git", "index"), filepath.Join(plain, ".git"))
	if err != nil || f.Split || len(f.Entries) != len(lsFiles(t, plain)) {
		t.Errorf("plain index: %v, %+v", err, f)
	}
}

// TestEwahBits decodes bitmaps built by hand: runs of zeros and ones and
// literal words, and refuses ones that claim more than they hold.
func TestEwahBits(t *testing.T) {
	ewah := func(size uint32, words ...uint64) []byte {
		b := binary.BigEndian.AppendUint32(nil, size)
		b = binary.BigEndian.AppendUint32(b, uint32(len(words)))
		for _, w := range words {
			b = binary.BigEndian.AppendUint64(b, w)
		}
		return append(b, 0, 0, 0, 0)
	}
	rlw := func(bit, run, literals uint64) uint64 { return bit | run<<1 | literals<<33 }
	cases := []struct {
		name string
		data []byte
		want string
		bad  bool
	}{
		{"empty", ewah(0), "[]", false},
		{"one literal", ewah(10, rlw(0, 0, 1), 0b1000000101), "[0 2 9]", false},
		{"a run of zeros then a literal", ewah(130, rlw(0, 2, 1), 0b10), "[129]", false},
		{"a run of ones", ewah(128, rlw(1, 2, 0)), fmt.Sprint(seq(0, 128)), false},
		{"two run words", ewah(140, rlw(0, 1, 1), 1, rlw(1, 1, 0)), "", true}, // its run of ones passes bit 140
		{"a run word after literals", ewah(150, rlw(0, 0, 1), 1, rlw(1, 1, 0)), fmt.Sprint(append([]int{0}, seq(64, 128)...)), false},
		{"literal words past the end", ewah(64, rlw(0, 0, 2), 1), "", true},
		{"a run of ones past the size", ewah(64, rlw(1, 1<<31, 0)), "", true},
		{"a bit past the size", ewah(3, rlw(0, 0, 1), 0b1000), "", true},
		{"cut short", ewah(64, rlw(0, 0, 1), 1)[:12], "", true},
		// Within its own size, but past the entries it is applied to:
		// refused before a position is kept (a few bytes asking for
		// 2^37 of them).
		{"a run of ones past the limit", ewah(1<<32-1, rlw(1, 1<<31, 0)), "", true},
		{"a bit past the limit", ewah(200, rlw(0, 2, 1), 1<<30), "", true},
	}
	const limit = 150
	for _, c := range cases {
		set, err := ewahBits(c.data, limit)
		if c.bad {
			if err == nil {
				t.Errorf("%s: decoded %v", c.name, set)
			}
			continue
		}
		n, lerr := ewahLen(c.data)
		if err != nil || lerr != nil || n != len(c.data) || fmt.Sprint(nonNil(set)) != c.want {
			t.Errorf("%s: %v, %d of %d bytes, %v %v; want %s", c.name, set, n, len(c.data), err, lerr, c.want)
		}
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// FuzzMerge parses a split index's two parts and merges them: whatever
// the bytes, no panic, and every merged entry has a name.
func FuzzMerge(f *testing.F) {
	zeroed := func(data []byte) []byte {
		z := append([]byte(nil), data...)
		clear(z[len(z)-20:])
		return z
	}
	for _, v := range []string{"2", "4"} {
		dir := splitRepo(f, v)
		small, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			f.Fatal(err)
		}
		base, err := os.ReadFile(sharedPart(f, dir))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(zeroed(small), zeroed(base))
	}
	f.Fuzz(func(t *testing.T, small, shared []byte) {
		s, err := Parse(small)
		if err != nil || !s.Split {
			return
		}
		b, err := Parse(shared)
		if err != nil || b.Split {
			return
		}
		ix, err := merge(b, s)
		if err != nil {
			return
		}
		for _, e := range ix.Entries {
			if e.Path == "" {
				t.Fatalf("merged entry without a name: %+v", e)
			}
		}
	})
}

// TestReadWholeWithASharedPartReadAhead: the shared part read before the
// small part changed is used when the small part still names it, and
// passed over when git wrote another.
func TestReadWholeWithASharedPartReadAhead(t *testing.T) {
	dir := splitRepo(t, "2")
	index, gitDir := filepath.Join(dir, ".git", "index"), filepath.Join(dir, ".git")
	s, err := ReadShared(index, gitDir)
	if err != nil || s == nil {
		t.Fatalf("ReadShared: %v, %v", s, err)
	}
	// The small part changes; the shared part stays.
	os.WriteFile(filepath.Join(dir, "z"), []byte("z changed\n"), 0o644)
	git(t, dir, "-c", "splitIndex.maxPercentChange=100", "add", "z")
	f, err := ReadWholeWith(index, gitDir, s)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := lsFiles(t, dir), asLsFiles(f.Index); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("with the shared part read ahead\n got %v\nwant %v", got, want)
	}
	if s.ix != nil {
		t.Error("the shared part read ahead was not used")
	}
	// git writes a new shared part: the one read ahead is passed over.
	s, err = ReadShared(index, gitDir)
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-index", "--split-index", "--force-write-index")
	git(t, dir, "-c", "splitIndex.maxPercentChange=0", "add", "a.txt")
	f, err = ReadWholeWith(index, gitDir, s)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := lsFiles(t, dir), asLsFiles(f.Index); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after git wrote a new shared part\n got %v\nwant %v", got, want)
	}
	if s.ix == nil {
		t.Error("a shared part that is no longer named was used")
	}
}

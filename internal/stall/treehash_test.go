package stall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTree creates files (slash-separated path → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustHash(t *testing.T, h *TreeHasher, dir string, skip func(string) bool) string {
	t.Helper()
	got, err := h.Hash(context.Background(), dir, skip)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTreeHash(t *testing.T) {
	skipRalph := func(rel string) bool {
		return strings.HasPrefix(rel, ".ralph/ralph.db") || rel == ".ralph/logs" || rel == "node_modules"
	}
	base := map[string]string{
		"src/a.ts":        "a",
		"src/b/c.ts":      "c",
		"README.md":       "hi",
		".git/HEAD":       "ref: refs/heads/main",
		".ralph/task.md":  "# Task",
		".ralph/ralph.db": "db",
	}

	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		same   bool
	}{
		{"nothing", func(*testing.T, string) {}, true},
		{"content", func(t *testing.T, dir string) { writeTree(t, dir, map[string]string{"src/a.ts": "b"}) }, false},
		{"same content rewritten", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"src/a.ts": "a"})
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "src/a.ts"), later, later); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"new file", func(t *testing.T, dir string) { writeTree(t, dir, map[string]string{"src/new.ts": ""}) }, false},
		{"removed file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"renamed file", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "src/a.ts"), filepath.Join(dir, "src/z.ts")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"executable bit", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "src/a.ts"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"read-only is not a change", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "src/a.ts"), 0o444); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"empty directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"symlink", func(t *testing.T, dir string) {
			if err := os.Symlink("src/a.ts", filepath.Join(dir, "link")); err != nil {
				t.Skip(err)
			}
		}, false},
		{".git ignored", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{".git/HEAD": "other", ".git/objects/x": "x", "sub/.git": "gitdir: x"})
		}, true},
		{"skipped paths ignored", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{".ralph/ralph.db": "changed", ".ralph/ralph.db-wal": "w", ".ralph/logs/1.log": "l", "node_modules/x/index.js": "x"})
		}, true},
		{"unskipped .ralph file counts", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{".ralph/task.md": "# Other"})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, base)
			h := NewTreeHasher()
			before := mustHash(t, h, dir, skipRalph)
			tt.change(t, dir)
			cached := mustHash(t, h, dir, skipRalph)
			fresh, err := TreeHash(context.Background(), dir, skipRalph)
			if err != nil {
				t.Fatal(err)
			}
			if cached != fresh {
				t.Errorf("cached hash %s differs from a fresh one %s", cached, fresh)
			}
			if (before == fresh) != tt.same {
				t.Errorf("hash unchanged = %v, want %v", before == fresh, tt.same)
			}
		})
	}
}

// TestTreeHasherCacheSeesSameSizeRewrite checks the cache is keyed on more
// than size: a same-size rewrite with a new modification time is re-read.
func TestTreeHasherCacheSeesSameSizeRewrite(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "aaaa"})
	old := time.Now().Add(-time.Hour)
	p := filepath.Join(dir, "a.txt")
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	h := NewTreeHasher()
	first := mustHash(t, h, dir, nil)
	if len(h.cache) != 1 {
		t.Fatalf("cache holds %d entries, want the old file cached", len(h.cache))
	}
	writeTree(t, dir, map[string]string{"a.txt": "bbbb"})
	if err := os.Chtimes(p, old.Add(time.Second), old.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if second := mustHash(t, h, dir, nil); second == first {
		t.Error("same-size rewrite with a new mtime not noticed")
	}
}

func TestTreeHashErrors(t *testing.T) {
	if _, err := TreeHash(context.Background(), filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("hash of a missing directory succeeded")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := TreeHash(ctx, dir, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("hash with a cancelled context: %v, want context.Canceled", err)
	}
}

// makeTree writes n files of about size bytes in directories of 100.
func makeTree(b *testing.B, n, size int) string {
	b.Helper()
	dir := b.TempDir()
	content := strings.Repeat("x", size)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.ts", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprint(i, content)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Minute) // older than the racy window, so cacheable
	if err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkTreeHash hashes 10,000 files of 2 KiB: cold reads every file,
// cached is a TreeHasher's second and later hash of an unchanged tree.
func BenchmarkTreeHash(b *testing.B) {
	dir := makeTree(b, 10_000, 2<<10)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := TreeHash(ctx, dir, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		h := NewTreeHasher()
		if _, err := h.Hash(ctx, dir, nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := h.Hash(ctx, dir, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

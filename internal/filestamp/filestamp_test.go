package filestamp_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/filestamp"
)

// A file rewritten with the same size and modification time keeps no
// equal stamp where the system has change times; a missing file's stamp
// is the zero Stamp.
func TestStampSeesARewrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if s := filestamp.Lstat(p); s != (filestamp.Stamp{}) {
		t.Errorf("a missing file's stamp = %+v, want the zero Stamp", s)
	}
	if err := os.WriteFile(p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	before := filestamp.Lstat(p)
	if !before.Exists || before.Size != 4 || before.Mtime != old.UnixNano() {
		t.Fatalf("stamp = %+v", before)
	}
	if filestamp.Lstat(p) != before {
		t.Error("two stamps of an unchanged file differ")
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	after := filestamp.Lstat(p)
	if filestamp.HaveIDs && after == before {
		t.Error("a rewrite with the same size and time kept its stamp: the change time should differ")
	}
}

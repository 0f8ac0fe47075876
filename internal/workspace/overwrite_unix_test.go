//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A counter as long as the last is written over it in place; anything
// that could leave a mix of the two, or write through to a file that is
// not the counter's alone, is replaced whole instead, and every way ends
// with the number in a plain file of its own.
func TestSetIntOverwritesOnlyWhatIsSafe(t *testing.T) {
	ino := func(path string) uint64 {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, path, other string) // the file holds "41" unless it says otherwise
		n       int
		inPlace bool
	}{
		{"as long", func(*testing.T, string, string) {}, 42, true},
		{"longer", func(*testing.T, string, string) {}, 100, false},
		{"shorter", func(*testing.T, string, string) {}, 7, false},
		{"a symbolic link", func(t *testing.T, path, other string) {
			os.Remove(path)
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, 42, false},
		{"a second name", func(t *testing.T, path, other string) {
			os.Remove(other)
			if err := os.Link(path, other); err != nil {
				t.Fatal(err)
			}
		}, 42, false},
		{"another mode", func(t *testing.T, path, _ string) { os.Chmod(path, 0o600) }, 42, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWorkspace(t)
			ws.Init()
			path := ws.Path(Iteration)
			other := filepath.Join(t.TempDir(), "other")
			if err := os.WriteFile(other, []byte("41"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := ws.SetInt(Iteration, 41); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, path, other)
			before := ino(path)
			if err := ws.SetInt(Iteration, tc.n); err != nil {
				t.Fatal(err)
			}
			if got := ws.Int(Iteration); got != tc.n {
				t.Errorf("read back %d, want %d", got, tc.n)
			}
			if same := ino(path) == before; same != tc.inPlace {
				t.Errorf("written in place: %v, want %v", same, tc.inPlace)
			}
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
				t.Errorf("the counter is %v (%v), want a regular file of mode 0644", fi.Mode(), err)
			}
			if b, _ := os.ReadFile(other); string(b) != "41" {
				t.Errorf("the other file now holds %q: written through", b)
			}
		})
	}
}

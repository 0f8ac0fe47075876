package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A second open of a locked file is refused at once, can read what the
// holder wrote, and gets the lock once the holder unlocks or closes.
func TestTryLockExcludesOtherOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	holder := open(t, path)
	if err := TryLock(holder); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if _, err := holder.WriteAt([]byte("1234\n"), 0); err != nil {
		t.Fatal(err)
	}
	other := open(t, path)
	if err := TryLock(other); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock = %v, want ErrLocked", err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "1234\n" {
		t.Errorf("reading a locked file = %q, %v; want the holder's pid", data, err)
	}
	if err := Unlock(holder); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(other); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	third := open(t, path)
	if err := TryLock(third); !errors.Is(err, ErrLocked) {
		t.Fatalf("lock while the second holds it = %v, want ErrLocked", err)
	}
	other.Close()
	if err := TryLock(third); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
}

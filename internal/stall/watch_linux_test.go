package stall

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A ralph killed outright leaves its watcher's private directory in the
// temporary directory; the next watcher removes it, and only it.
func TestNewWatcherSweepsDeadOwnersMarkers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(tmp, markerPrefix+strconv.Itoa(os.Getpid())+"-1")
	gone := filepath.Join(tmp, markerPrefix+strconv.Itoa(dead.Process.Pid)+"-2")
	other := filepath.Join(tmp, markerPrefix+"not-a-pid")
	for _, d := range []string{mine, gone, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w, err := newWatcher(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the dead process's marker directory is still there (%v)", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
	if filepath.Dir(w.marker) != tmp {
		t.Errorf("marker %s not in %s", w.marker, tmp)
	}
}

// A drain makes no file once its beacon exists (making one is most of
// what a drain costs), and it still sees every change made before it. A
// drain that returned before its own write's event leaves that event
// unread: the next drain must not take it for its own, or it would
// return before the changes made since.
func TestDrainReusesItsBeacon(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	root := t.TempDir()
	w, err := newWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if err := w.add(""); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		name := fmt.Sprintf("f%d.txt", i)
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		changed, rescan, err := w.drain(ctx)
		if err != nil || rescan || !changed[name] {
			t.Fatalf("drain %d = %v %v %v, want %s", i, changed, rescan, err, name)
		}
	}
	if w.beacons != 1 {
		t.Errorf("five drains made %d beacon files, want 1", w.beacons)
	}
	if entries, _ := os.ReadDir(w.marker); len(entries) != 1 {
		t.Errorf("the private directory holds %d files, want the one beacon", len(entries))
	}

	// As a drain cut short leaves it: its write's event unread.
	if _, err := w.signal(); err != nil {
		t.Fatal(err)
	}
	w.dropBeacon()
	if err := os.WriteFile(filepath.Join(root, "late.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, rescan, err := w.drain(ctx)
	if err != nil || rescan || !changed["late.txt"] {
		t.Errorf("drain after one cut short = %v %v %v, want late.txt", changed, rescan, err)
	}
}

// With the temporary directory inside the watched tree, no beacon stays
// in the tree between drains: a snapshot would record it.
func TestDrainLeavesNoBeaconInTheTree(t *testing.T) {
	root := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(root, ".tmp"))
	if err := os.Mkdir(filepath.Join(root, ".tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := newWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if err := w.add(""); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := fmt.Sprintf("f%d.txt", i)
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		changed, rescan, err := w.drain(context.Background())
		if err != nil || rescan || !changed[name] {
			t.Fatalf("drain %d = %v %v %v, want %s", i, changed, rescan, err, name)
		}
		if entries, _ := os.ReadDir(w.marker); len(entries) != 0 {
			t.Errorf("drain %d left %d files in %s, inside the tree", i, len(entries), w.marker)
		}
	}
}

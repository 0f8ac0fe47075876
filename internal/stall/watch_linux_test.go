package stall

import (
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

package stall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-harness/ralph/internal/proc"
)

// barrierTimeout bounds how long drain waits for its own marker event.
// The kernel delivers it right after the events queued before it, so only
// a broken watch ever reaches the bound.
const barrierTimeout = 10 * time.Second

// A watcher watches directories of one tree through fsnotify. Events reach
// it through fsnotify's reading goroutine, so drain cannot simply take what
// is queued: it first makes a change of its own in a private directory
// watched by the same instance and reads events until that change arrives.
// The kernel reports the events of one instance in order, so every change
// made in the tree before drain was called has been read by then.
//
// It runs on Linux only: elsewhere fsnotify's backends hold a descriptor
// per file (kqueue) or report changes differently, and a Tracker hashes the
// whole tree instead.
type watcher struct {
	fs     *fsnotify.Watcher
	root   string          // cleaned absolute or relative root
	dirs   map[string]bool // watched directories, relative to root
	marker string          // the private directory drain writes in
	// beacon is the file in marker that drain writes a byte to, kept
	// from one drain to the next: creating a file each time costs more
	// than the rest of a drain (a file system allocates an inode, and
	// ext4 searches for one not recently freed). beacons counts the
	// files made, to name the next: a drain that returns before its own
	// write's event drops its beacon, so that the next drain's is a new
	// file and an event of the old one left unread is never taken for it.
	beacon  *os.File
	beacons int
	// inTree is set when marker lies in the watched tree (TMPDIR set
	// inside it): each drain then removes its beacon, as snapshots of
	// the tree must not hold it.
	inTree bool
}

func newWatcher(root string) (*watcher, error) {
	if runtime.GOOS != "linux" {
		return nil, errors.New("watching the tree is supported on Linux only")
	}
	proc.SweepTemp(markerPrefix)
	marker, err := proc.MkdirTemp(markerPrefix)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		os.Remove(marker)
		return nil, fmt.Errorf("watch: %w", err)
	}
	if err := fw.Add(marker); err != nil {
		fw.Close()
		os.Remove(marker)
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &watcher{fs: fw, root: filepath.Clean(root), dirs: map[string]bool{}, marker: marker}
	w.inTree = inTree(root, marker)
	return w, nil
}

// inTree reports whether path lies in the tree at root, symbolic links
// resolved (true when either cannot be resolved: the cautious answer).
func inTree(root, path string) bool {
	d, err := filepath.EvalSymlinks(root)
	if err != nil {
		return true
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true
	}
	rel, err := filepath.Rel(d, p)
	return err != nil || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// markerPrefix begins the name of a watcher's private directory in the
// temporary directory; the owning process's pid and a dash follow it.
const markerPrefix = "ralph-watch-"

func (w *watcher) close() {
	w.dropBeacon()
	w.fs.Close()
	os.RemoveAll(w.marker)
}

// dropBeacon closes and removes the beacon, if any.
func (w *watcher) dropBeacon() {
	if w.beacon != nil {
		w.beacon.Close()
		os.Remove(w.beacon.Name())
		w.beacon = nil
	}
}

// signal writes to the beacon, made when there is none; it returns the
// beacon's path, which the kernel reports the write on.
func (w *watcher) signal() (string, error) {
	if w.beacon == nil {
		w.beacons++
		f, err := os.OpenFile(filepath.Join(w.marker, strconv.Itoa(w.beacons)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("watch: %w", err)
		}
		w.beacon = f
	}
	if _, err := w.beacon.WriteAt([]byte{0}, 0); err != nil {
		w.dropBeacon()
		return "", fmt.Errorf("watch: %w", err)
	}
	return w.beacon.Name(), nil
}

func (w *watcher) abs(rel string) string {
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// add watches the directory rel. It returns an error matching
// os.ErrNotExist when rel is gone or is no longer a directory.
func (w *watcher) add(rel string) error {
	abs := w.abs(rel)
	if err := w.fs.Add(abs); err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return os.ErrNotExist
		}
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("watch %s: the inotify watch limit (fs.inotify.max_user_watches) is reached", rel)
		}
		return fmt.Errorf("watch %s: %w", rel, err)
	}
	// fsnotify follows symbolic links and watches files too: a path that
	// became either since it was listed is not a directory of the tree.
	if info, err := os.Lstat(abs); err != nil || !info.IsDir() {
		w.fs.Remove(abs)
		return os.ErrNotExist
	}
	w.dirs[rel] = true
	return nil
}

// watching reports whether rel is a watched directory.
func (w *watcher) watching(rel string) bool {
	return w.dirs[rel]
}

// removeTree stops watching rel and every directory under it.
func (w *watcher) removeTree(rel string) {
	prefix := rel + "/"
	for d := range w.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			w.fs.Remove(w.abs(d)) // fsnotify dropped it already when it was moved or deleted
			delete(w.dirs, d)
		}
	}
}

// drain returns the paths (relative to the root) of every change reported
// since the last drain. rescan is true when events were lost (the queue
// overflowed) or the root itself went away; the watcher is then to be
// replaced, and the events after the loss are left unread.
func (w *watcher) drain(ctx context.Context) (changed map[string]bool, rescan bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	mark, err := w.signal()
	if err != nil {
		return nil, false, err
	}
	reached := false
	defer func() {
		if !reached || w.inTree {
			w.dropBeacon()
		}
	}()
	timeout := time.NewTimer(barrierTimeout)
	defer timeout.Stop()
	changed = map[string]bool{}
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return nil, false, errors.New("watch: closed")
			}
			if ev.Name == mark && ev.Has(fsnotify.Write) {
				reached = true
				return changed, false, nil
			}
			if ev.Name == w.marker || strings.HasPrefix(ev.Name, w.marker+string(filepath.Separator)) {
				continue
			}
			if ev.Name == w.root {
				// The root itself has no parent watched to report it.
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					return nil, true, nil
				}
				continue
			}
			rel, ok := strings.CutPrefix(ev.Name, w.root+string(filepath.Separator))
			if !ok {
				continue
			}
			changed[filepath.ToSlash(rel)] = true
		case err, ok := <-w.fs.Errors:
			if !ok {
				return nil, false, errors.New("watch: closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				return nil, true, nil
			}
			return nil, false, fmt.Errorf("read file events: %w", err)
		case <-timeout.C:
			return nil, false, errors.New("watch: no event arrived for a change the watcher made itself")
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

package stall

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// watchMask is what a watched directory reports: entries created, deleted,
// written, changed in mode or moved, and the directory itself going away.
const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_ATTRIB |
	syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF |
	syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// A watcher is an inotify instance watching directories of one tree. Its
// file descriptor is non-blocking and read only by drain: the kernel queues
// an event while the change is made, so a drain after a change returns it.
type watcher struct {
	fd   int
	root string
	dirs map[string]int32 // rel dir → watch descriptor
	wds  map[int32]string // watch descriptor → rel dir
	buf  []byte
}

func newWatcher(root string) (*watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return &watcher{fd: fd, root: root, dirs: map[string]int32{}, wds: map[int32]string{}, buf: make([]byte, 64<<10)}, nil
}

func (w *watcher) close() { syscall.Close(w.fd) }

// add watches the directory rel.
func (w *watcher) add(rel string) error {
	wd, err := syscall.InotifyAddWatch(w.fd, filepath.Join(w.root, filepath.FromSlash(rel)), watchMask)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return os.ErrNotExist
		}
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("watch %s: the inotify watch limit (fs.inotify.max_user_watches) is reached", rel)
		}
		return fmt.Errorf("watch %s: %w", rel, err)
	}
	wd32 := int32(wd)
	if old, ok := w.wds[wd32]; ok && old != rel {
		delete(w.dirs, old) // the same directory, moved
	}
	w.dirs[rel], w.wds[wd32] = wd32, rel
	return nil
}

// watching reports whether rel is a watched directory.
func (w *watcher) watching(rel string) bool {
	_, ok := w.dirs[rel]
	return ok
}

// removeTree stops watching rel and every directory under it.
func (w *watcher) removeTree(rel string) {
	prefix := rel + "/"
	for d, wd := range w.dirs {
		if d == rel || len(d) > len(prefix) && d[:len(prefix)] == prefix {
			syscall.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.dirs, d)
			delete(w.wds, wd)
		}
	}
}

// drain reads every queued event and returns the paths they name (relative
// to the root). rescan is true when events were lost (the queue
// overflowed) or the root itself went away.
func (w *watcher) drain() (changed map[string]bool, rescan bool, err error) {
	changed = map[string]bool{}
	for {
		n, err := syscall.Read(w.fd, w.buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return changed, rescan, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("read inotify events: %w", err)
		}
		if n <= 0 {
			return changed, rescan, nil
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameStart := off + syscall.SizeofInotifyEvent
			off = nameStart + int(ev.Len)
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				rescan = true
				continue
			}
			dir, ok := w.wds[ev.Wd]
			if !ok {
				continue // a watch already removed
			}
			if ev.Mask&syscall.IN_IGNORED != 0 {
				if w.dirs[dir] == ev.Wd {
					delete(w.dirs, dir)
				}
				delete(w.wds, ev.Wd)
				continue
			}
			name := w.buf[nameStart:off]
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			if len(name) == 0 {
				// The directory itself: its parent reports a move or a
				// deletion, except for the root, which has none.
				if dir == "" && ev.Mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0 {
					rescan = true
				}
				continue
			}
			p := string(name)
			if dir != "" {
				p = dir + "/" + p
			}
			changed[p] = true
		}
	}
}

//go:build !linux

package stall

import "errors"

// watcher is Linux-only; elsewhere a Tracker hashes the whole tree.
type watcher struct{}

func newWatcher(string) (*watcher, error) {
	return nil, errors.New("watching the tree is supported on Linux only")
}

func (w *watcher) close()                                {}
func (w *watcher) add(string) error                      { return nil }
func (w *watcher) watching(string) bool                  { return false }
func (w *watcher) removeTree(string)                     {}
func (w *watcher) drain() (map[string]bool, bool, error) { return nil, true, nil }

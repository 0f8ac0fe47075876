//go:build !linux

package stall

import "os"

// leafDir reports whether the open directory f is known to have no
// subdirectory: never, here.
func leafDir(f *os.File) bool { return false }

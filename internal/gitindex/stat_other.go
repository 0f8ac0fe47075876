//go:build !linux

package gitindex

import (
	"io/fs"
	"time"
)

// Unchanged reports whether the file fi describes is, by git's stat check,
// the one e was hashed from. Outside Linux it is always false: the file
// must be read.
func (e *Entry) Unchanged(fi fs.FileInfo, indexTime time.Time) bool { return false }

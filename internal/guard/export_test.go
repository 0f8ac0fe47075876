package guard

import (
	"io/fs"
	"testing"
	"time"
)

// CoarseFileTimes makes the history guard see file times as a file
// system keeping whole seconds does, with no inode numbers, for the rest
// of t.
func CoarseFileTimes(t *testing.T) {
	saved := stampFile
	stampFile = func(path string, fi fs.FileInfo) refStamp {
		return refStamp{path: path, exists: true, mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().Truncate(time.Second).UnixNano()}
	}
	t.Cleanup(func() { stampFile = saved })
}

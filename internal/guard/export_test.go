package guard

import (
	"io/fs"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/filestamp"
)

// CoarseFileTimes makes the history guard see file times as a file
// system keeping whole seconds does, with no inode numbers, for the rest
// of t.
func CoarseFileTimes(t *testing.T) {
	saved := stampFile
	stampFile = func(path string, fi fs.FileInfo) refStamp {
		return refStamp{path: path, Stamp: filestamp.Stamp{Exists: true, Mode: fi.Mode(), Size: fi.Size(), Mtime: fi.ModTime().Truncate(time.Second).UnixNano()}}
	}
	t.Cleanup(func() { stampFile = saved })
}

// Package filestamp tells whether a file was written since it was last
// looked at by its stat data alone, as git tells an index entry clean:
// a write changes the size, the modification time, or (where the system
// has them) the change time and inode, which no one can set back.
package filestamp

import (
	"io/fs"
	"os"
)

// Stamp is what lstat says of a file. Two stamps of the same path that
// are equal (==) mean an unchanged file, unless the file was written
// within the clock's tick of the first (see git's racy rule).
type Stamp struct {
	Exists bool
	Mode   fs.FileMode
	Size   int64
	Mtime  int64 // nanoseconds since 1970
	// Ino and Ctime (nanoseconds) are zero where the system has none
	// (HaveIDs is false).
	Ino   uint64
	Ctime int64
}

// Of returns the stamp of the file fi describes.
func Of(fi fs.FileInfo) Stamp {
	s := Stamp{Exists: true, Mode: fi.Mode(), Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	s.Ino, s.Ctime = ids(fi)
	return s
}

// Lstat returns the stamp of the file called name, the zero Stamp when
// there is none (or it cannot be read).
func Lstat(name string) Stamp {
	fi, err := os.Lstat(name)
	if err != nil {
		return Stamp{}
	}
	return Of(fi)
}

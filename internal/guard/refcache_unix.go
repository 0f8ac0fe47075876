//go:build linux || darwin || freebsd || netbsd || openbsd

package guard

import (
	"io/fs"
	"syscall"
)

// fileID is a file's inode number and change time: a ref written anew
// (git writes a lock file and renames it) gets a new inode.
type fileID struct {
	ino   uint64
	ctime int64
}

const haveFileIDs = true

func idOf(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{ino: uint64(st.Ino), ctime: ctimeOf(st)}
}

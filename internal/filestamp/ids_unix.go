//go:build linux || darwin || freebsd || netbsd || openbsd

package filestamp

import (
	"io/fs"
	"syscall"
)

// HaveIDs reports whether stamps carry the inode and change time: a file
// written anew (a lock file renamed over it) gets a new inode, and any
// write a new change time.
const HaveIDs = true

func ids(fi fs.FileInfo) (uint64, int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ino), ctime(st)
}

package stall

import (
	"os"
	"syscall"
)

// Magic numbers of the file systems known to keep a directory's link
// count at two plus its subdirectories (statfs(2)).
const (
	ext4Magic  = 0xEF53 // ext2, ext3 and ext4
	xfsMagic   = 0x58465342
	tmpfsMagic = 0x01021994
)

// leafDir reports whether the open directory f has no subdirectory, by
// the Unix convention that a directory's link count is two plus the
// number of its subdirectories, on the file systems known to keep it
// (others, such as btrfs or overlayfs, report a count that says
// nothing, and their directories are read).
func leafDir(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink != 2 {
		return false
	}
	var fs syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &fs); err != nil {
		return false
	}
	switch fs.Type {
	case ext4Magic, xfsMagic, tmpfsMagic:
		return true
	}
	return false
}

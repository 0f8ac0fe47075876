//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package guard

import "io/fs"

// fileID is empty where the system has no inode numbers: every read of
// the refs asks git.
type fileID struct{}

const haveFileIDs = false

func idOf(fs.FileInfo) fileID { return fileID{} }

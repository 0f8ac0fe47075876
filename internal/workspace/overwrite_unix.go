//go:build unix

package workspace

import (
	"os"
	"syscall"
)

// overwrite writes data over the file at path in place, and reports
// whether it did, when that can leave nothing but the old content or the
// new, whatever stops it (a kill, a power cut): data is as long as the
// file and at most a disk sector, so one write replaces the bytes and
// nothing of the file's size or name changes; and the file is what
// WriteFile makes (a regular file of mode perm with one name, not a
// link a writer of the tree put there). A write that failed part-way is
// reported as not done, for WriteFile to replace the file.
func overwrite(path string, data []byte, perm os.FileMode) bool {
	if len(data) == 0 || len(data) > 512 {
		return false
	}
	// Non-blocking: a named pipe put at path fails to open instead of
	// waiting for a reader.
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() || fi.Mode().Perm() != perm || st.Nlink != 1 || fi.Size() != int64(len(data)) {
		return false
	}
	n, err := f.WriteAt(data, 0)
	return err == nil && n == len(data)
}

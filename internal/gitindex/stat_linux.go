package gitindex

import (
	"io/fs"
	"syscall"
	"time"
)

// Unchanged reports whether the file fi describes is, by git's stat check,
// the one e was hashed from, so that e.ID is its content's blob id: the
// same type, size, modification and change times (to the nanosecond),
// inode and owner, and not "racily clean" — modified no earlier than
// the index file was written (indexTime), when a change within the same
// clock tick would leave the stat data as it was. It is stricter than git:
// an entry git stored without nanoseconds never matches.
func (e *Entry) Unchanged(fi fs.FileInfo, indexTime time.Time) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || e.Stage != 0 || e.AssumeValid || e.SkipWorktree || e.IntentToAdd {
		return false
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		if e.Mode&0o170000 != 0o100000 {
			return false
		}
	case m&fs.ModeSymlink != 0:
		if e.Mode != 0o120000 {
			return false
		}
	default:
		return false
	}
	if st.Size < 0 || st.Size > 0xffffffff || uint32(st.Size) != e.Size {
		return false
	}
	if uint32(st.Mtim.Sec) != e.MtimeSec || uint32(st.Mtim.Nsec) != e.MtimeNsec ||
		uint32(st.Ctim.Sec) != e.CtimeSec || uint32(st.Ctim.Nsec) != e.CtimeNsec ||
		uint32(st.Ino) != e.Ino || st.Uid != e.UID || st.Gid != e.GID {
		return false
	}
	mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	return mtime.Before(indexTime)
}

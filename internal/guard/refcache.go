package guard

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/filestamp"
	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/snapshot"
)

// The history guard reads the refs before and after every agent run, and
// they rarely change: readHistory reuses its last read while the files
// that hold those refs are as they were, as git reuses an index entry
// while the file's stat data is (refFiles).

// refStamp is what a file of the ref storage was at a read: its stat
// data and, for a loose ref, its content.
type refStamp struct {
	path string
	filestamp.Stamp
	content string
}

// refRead is one read of the refs, and the stamps of the files it was
// read from, taken before it.
type refRead struct {
	at     time.Time // when the stamps were taken
	stamps []refStamp
	state  historyState
}

var refReads = struct {
	sync.Mutex
	m    map[string]refRead // dir and branch → the last read
	last uint64             // the number of the last read recorded
}{m: map[string]refRead{}}

// gitDirs caches, by working tree, its git directory and common git
// directory ("" when the ref storage is not files this code knows).
var gitDirs sync.Map // dir → [2]string

// stampFile is how a file's stamp is taken (tests replace it to play a
// file system with coarse times).
var stampFile = func(path string, fi fs.FileInfo) refStamp {
	return refStamp{path: path, Stamp: filestamp.Of(fi)}
}

// cachedHistory returns the last read of dir's refs for o when the files
// holding them are unchanged, and a function that records a new read and
// returns its number (nil when the refs of dir cannot be told unchanged
// this way: reftable, a system without inode numbers, a ref that is
// symbolic). A read's refs map is shared, never modified.
func cachedHistory(ctx context.Context, dir string, o Origin) (historyState, bool, func(historyState) uint64) {
	if !filestamp.HaveIDs {
		return historyState{}, false, nil
	}
	gitDir, common := refDirs(ctx, dir)
	if gitDir == "" {
		return historyState{}, false, nil
	}
	key := dir + "\x00" + o.Branch
	refReads.Lock()
	last, have := refReads.m[key]
	refReads.Unlock()
	at := time.Now()
	stamps, ok := refFiles(gitDir, common, o, last)
	if !ok {
		return historyState{}, false, nil
	}
	if have && !racy(last) && slices.Equal(last.stamps, stamps) {
		return last.state, true, nil
	}
	return historyState{}, false, func(s historyState) uint64 {
		if s.ref != "" && s.ref != o.Branch {
			return 0 // HEAD on another branch: its file is not stamped
		}
		refReads.Lock()
		defer refReads.Unlock()
		refReads.last++
		s.read = refReads.last
		refReads.m[key] = refRead{at: at, stamps: stamps, state: s}
		return s.read
	}
}

// racy reports whether a file of r may have changed since without its
// stamp changing: its time is not safely before the read. File times
// come from a clock that ticks coarsely (a few milliseconds on Linux, a
// second or two on some file systems), so a file written in the tick of
// the read could be written again in the same tick, same size, and keep
// its stamp.
func racy(r refRead) bool {
	for _, s := range r.stamps {
		if racyStamp(s, r.at) {
			return true
		}
	}
	return false
}

// racyStamp reports whether the file s stamps may have changed since the
// read at without its stamp changing.
func racyStamp(s refStamp, at time.Time) bool {
	if !s.Exists {
		return false
	}
	slack := 100 * time.Millisecond
	if s.Mtime%int64(time.Millisecond) == 0 {
		slack = 2 * time.Second // times in whole milliseconds or coarser
	}
	return s.Mtime >= at.Add(-slack).UnixNano()
}

// refDirs returns dir's git directory and common git directory, "" when
// its refs are not stored as files.
func refDirs(ctx context.Context, dir string) (gitDir, common string) {
	if v, ok := gitDirs.Load(dir); ok {
		d := v.([2]string)
		return d[0], d[1]
	}
	out, err := git.Run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
	if err != nil {
		return "", "" // asked again next time
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) == 2 && filepath.IsAbs(lines[0]) && filepath.IsAbs(lines[1]) {
		gitDir, common = lines[0], lines[1]
		if _, err := os.Lstat(filepath.Join(common, "reftable")); err == nil {
			gitDir, common = "", ""
		}
	}
	gitDirs.Store(dir, [2]string{gitDir, common})
	return gitDir, common
}

// sameFile reports whether two stamps of a file agree but for content.
func sameFile(a, b refStamp) bool {
	a.content, b.content = "", ""
	return a == b
}

// refFiles stamps the files that hold what readHistory reads: HEAD, the
// packed refs, the branch's loose ref, and the snapshot refs' directory
// with every loose ref in it. ok is false when a loose ref is symbolic
// (its value is another ref's, whose file is not stamped).
//
// A file's content is taken from last, the previous read, when its stamp
// is the same and was not racy then, as git takes a blob id from its
// index: a check of refs nobody moved stats their files and reads none.
func refFiles(gitDir, common string, o Origin, last refRead) (stamps []refStamp, ok bool) {
	// A loose ref's content is stamped too; only HEAD may be symbolic.
	const loose, head = 1, 2
	known := make(map[string]refStamp, len(last.stamps))
	for _, s := range last.stamps {
		if s.Exists && !racyStamp(s, last.at) {
			known[s.path] = s
		}
	}
	stamp := func(path string, read int) bool {
		fi, err := os.Lstat(path)
		if err != nil {
			stamps = append(stamps, refStamp{path: path})
			return errors.Is(err, fs.ErrNotExist)
		}
		s := stampFile(path, fi)
		if k, ok := known[path]; ok && read != 0 && fi.Mode().IsRegular() && sameFile(k, s) {
			s.content = k.content
		} else if read != 0 && fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil || (read == loose && bytes.HasPrefix(b, []byte("ref:"))) {
				return false
			}
			s.content = string(b)
		}
		stamps = append(stamps, s)
		return true
	}
	if !stamp(filepath.Join(gitDir, "HEAD"), head) || !stamp(filepath.Join(common, "packed-refs"), 0) ||
		!stamp(filepath.Join(common, filepath.FromSlash(snapshot.TipRef)), loose) {
		return nil, false
	}
	if o.Branch != "" && !stamp(filepath.Join(common, filepath.FromSlash(o.Branch)), loose) {
		return nil, false
	}
	root := filepath.Join(common, filepath.FromSlash(strings.TrimSuffix(snapshot.RefPrefix, "/")))
	if !stamp(root, 0) {
		return nil, false
	}
	ok = true
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			if path != root {
				ok = false
			}
			return fs.SkipDir
		case path == root:
			return nil
		}
		read := loose
		if d.IsDir() {
			read = 0
		}
		if !stamp(path, read) {
			ok = false
			return fs.SkipAll
		}
		return nil
	})
	return stamps, ok
}

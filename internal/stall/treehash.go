package stall

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// TreeHash returns a content hash of the workspace at dir: the sha256 hex
// digest of every file's slash-separated path, kind (regular, executable,
// symlink) and content digest, in lexical path order. A content digest is
// the id git gives the content as a blob (blobID), so that a file git's
// index vouches for needs no reading (see Tracker). Directories named .git
// are skipped at any depth, and so is every path (relative to dir,
// slash-separated) for which skip returns true; a skipped directory is not
// entered. Nothing else is skipped: the walk does not read .gitignore, so the
// caller's skip must leave out what it does not want hashed (ralph's own
// database and logs, and large generated trees such as node_modules, which
// cost a stat per file even when cached). Empty directories, modification
// times and permissions other than the owner's executable bit (the one git
// records) do not affect the hash; symlinks are hashed by their target,
// not followed.
//
// TreeHash reads every file. To hash the same tree repeatedly, as the engine
// does once per iteration, use a TreeHasher, which reads only files whose
// size or modification time changed.
func TreeHash(ctx context.Context, dir string, skip func(rel string) bool) (string, error) {
	return NewTreeHasher().Hash(ctx, dir, skip)
}

// racyWindow is how recent a file's modification time may be for its cached
// digest to be distrusted: a file rewritten within the file system's time
// granularity of being read could keep its size and time, as git's "racily
// clean" index entries can.
const racyWindow = 2 * time.Second

// A TreeHasher computes TreeHash, remembering each file's content digest
// together with its size, modification time and mode, so a later hash of the
// same tree reads only the files that changed. The hash itself depends only
// on content. A TreeHasher is safe for concurrent use.
type TreeHasher struct {
	mu    sync.Mutex
	cache map[string]cachedFile
}

type cachedFile struct {
	size   int64
	mtime  time.Time
	mode   fs.FileMode
	digest [sha256.Size]byte
}

// NewTreeHasher returns a TreeHasher with an empty cache.
func NewTreeHasher() *TreeHasher {
	return &TreeHasher{cache: make(map[string]cachedFile)}
}

// treeEntry is one file found by the walk.
type treeEntry struct {
	rel    string
	abs    string
	kind   byte // 'f' regular, 'x' executable, 'l' symlink
	info   fs.FileInfo
	digest [sha256.Size]byte
	gone   bool // vanished between the walk and the read
	known  bool // digest taken from git's index: not to be read
}

// Hash returns the tree hash of dir, as TreeHash does, reusing digests from
// earlier calls for files whose size, modification time and mode have not
// changed.
func (h *TreeHasher) Hash(ctx context.Context, dir string, skip func(rel string) bool) (string, error) {
	entries, err := walkTree(ctx, dir, skip)
	if err != nil {
		return "", err
	}

	if err := h.digest(ctx, entries); err != nil {
		return "", err
	}

	sum := sha256.New()
	for _, e := range entries {
		if e.gone {
			continue
		}
		sum.Write([]byte(e.rel))
		sum.Write([]byte{0, e.kind, 0})
		sum.Write(e.digest[:])
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// digest fills in the digests of the files among entries, reusing cached
// digests for files whose size, modification time and mode have not changed
// and reading the others; an entry whose file vanished is marked gone.
func (h *TreeHasher) digest(ctx context.Context, entries []treeEntry) error {
	now := time.Now()
	var misses []*treeEntry
	h.mu.Lock()
	for i := range entries {
		e := &entries[i]
		if e.kind == 'l' || e.known {
			continue
		}
		c, ok := h.cache[e.abs]
		if ok && c.size == e.info.Size() && c.mtime.Equal(e.info.ModTime()) && c.mode == e.info.Mode() {
			e.digest = c.digest
			continue
		}
		misses = append(misses, e)
	}
	h.mu.Unlock()

	if err := digestFiles(ctx, misses); err != nil {
		return err
	}

	h.mu.Lock()
	for _, e := range misses {
		if e.gone {
			delete(h.cache, e.abs)
			continue
		}
		if now.Sub(e.info.ModTime()) < racyWindow {
			delete(h.cache, e.abs) // too fresh to trust next time
			continue
		}
		h.cache[e.abs] = cachedFile{size: e.info.Size(), mtime: e.info.ModTime(), mode: e.info.Mode(), digest: e.digest}
	}
	h.mu.Unlock()

	return nil
}

// walkTree lists the files under dir in lexical order, symlinks already
// digested by their target.
func walkTree(ctx context.Context, dir string, skip func(rel string) bool) ([]treeEntry, error) {
	var entries []treeEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil // removed while we walked
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Name() == ".git" || (skip != nil && skip(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			entries = append(entries, treeEntry{rel: rel, abs: p, kind: 'l', digest: blobID([]byte(target))})
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			kind := byte('f')
			if info.Mode()&0o100 != 0 { // git's executable: the owner's bit
				kind = 'x'
			}
			entries = append(entries, treeEntry{rel: rel, abs: p, kind: kind, info: info})
		}
		return nil // sockets, devices and pipes are not content
	})
	if err != nil {
		return nil, fmt.Errorf("walk workspace: %w", err)
	}
	return entries, nil
}

// digestFiles reads and digests the files in parallel.
func digestFiles(ctx context.Context, files []*treeEntry) error {
	if len(files) == 0 {
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), 8, len(files))
	next := make(chan *treeEntry)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			for e := range next {
				if err := digestFile(e, buf); err != nil {
					errs <- err
					for range next { // drain so the sender finishes
					}
					return
				}
			}
		}()
	}
	var err error
send:
	for _, e := range files {
		select {
		case next <- e:
		case err = <-errs:
			break send
		case <-ctx.Done():
			err = ctx.Err()
			break send
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs // nil when the channel is empty
	}
	return err
}

// digestFile sets e's digest to the blob id of the file's content. The
// id's header holds the content's length, taken before the read: a file
// whose length changed meanwhile is read again, up to a few times.
func digestFile(e *treeEntry, buf []byte) error {
	f, err := os.Open(e.abs)
	if errors.Is(err, fs.ErrNotExist) {
		e.gone = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("hash %s: %w", e.rel, err)
	}
	defer f.Close()
	for try := 0; ; try++ {
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("hash %s: %w", e.rel, err)
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", fi.Size())
		// Hide *os.File's WriteTo, which would ignore buf and allocate its own.
		n, err := io.CopyBuffer(h, struct{ io.Reader }{io.NewSectionReader(f, 0, 1<<62)}, buf)
		if err != nil {
			return fmt.Errorf("hash %s: %w", e.rel, err)
		}
		if n == fi.Size() || try == 2 {
			e.digest = [sha256.Size]byte{}
			h.Sum(e.digest[:0])
			return nil
		}
	}
}

// blobID is the id git gives data as a blob: the SHA-1 of a header
// "blob <length>\0" and the data, in the first 20 bytes of a digest.
func blobID(data []byte) [sha256.Size]byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

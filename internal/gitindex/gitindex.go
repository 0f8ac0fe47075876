// Package gitindex reads git's index file (.git/index): its entries, each
// with the blob id git stored and the file's stat data as git last saw
// it, so that a caller can tell, as git does, which working-tree files are
// unchanged since git hashed them without reading them, and the tree
// git last wrote the index as (its cache tree's root). It reads index
// versions 2 to 4 of a SHA-1 repository, and a split index with its
// shared part (ReadWhole); it never writes.
package gitindex

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"
)

// Entry is one index entry.
type Entry struct {
	Path string
	// Mode is git's mode: 0o100644, 0o100755, 0o120000 (a symlink),
	// 0o160000 (a submodule) or 0o40000 (a sparse index's directory).
	Mode uint32
	// ID is the blob id of the content git stored.
	ID [sha1.Size]byte
	// Stage is 0, or 1 to 3 for a path with a merge conflict.
	Stage int
	// The file's stat data when git last hashed it, truncated to 32 bits
	// as git stores it.
	CtimeSec, CtimeNsec, MtimeSec, MtimeNsec uint32
	Dev, Ino, UID, GID, Size                 uint32
	// AssumeValid (git update-index --assume-unchanged), SkipWorktree
	// (sparse checkout) and IntentToAdd (git add -N) are entries whose
	// stat data or id does not stand for the working tree's file.
	AssumeValid, SkipWorktree, IntentToAdd bool
}

// Index is a parsed index file.
type Index struct {
	Version uint32
	Entries []Entry
	// Split is set when the file is the small part of a split index (a
	// "link" extension): entries live in a sharedindex file too, and
	// Entries is not the whole index (ReadWhole makes it whole).
	Split bool
	// link is the split index's link extension, when Split.
	link *link
	// sum is the file's trailing checksum, which names a shared index.
	sum [sha1.Size]byte
	// Sparse is set for a sparse index (an "sdir" extension): some
	// entries are directories standing for everything under them.
	Sparse bool
	// Tree is the id of the tree git last wrote the whole index as (the
	// root of its cache tree, the "TREE" extension), when TreeKnown: a
	// change to the index since takes it away, so it is the tree git
	// write-tree would write now, if the repository still has it (git gc
	// prunes a tree nothing reaches): a caller checks, as git does.
	Tree      [sha1.Size]byte
	TreeKnown bool
}

// Plain reports whether the index is whole and every entry stands for
// its working-tree file as git's stat check sees it: not split, not
// sparse, no conflict, no entry git is told to skip.
func (ix *Index) Plain() bool {
	if ix.Split || ix.Sparse {
		return false
	}
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if e.Stage != 0 || e.AssumeValid || e.SkipWorktree {
			return false
		}
	}
	return true
}

// ErrFormat marks data that is not an index file this package reads.
var ErrFormat = errors.New("not a git index file of version 2 to 4")

// File is an index file as read: its content and its modification time,
// which git's racy check compares the entries' times with.
type File struct {
	*Index
	ModTime time.Time
}

// Read reads and parses the index file at path.
func Read(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	ix, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &File{Index: ix, ModTime: fi.ModTime()}, nil
}

const (
	entryFixed    = 62 // stat data, id and flags
	flagValid     = 0x8000
	flagExtended  = 0x4000
	flagStage     = 0x3000
	flagNameMask  = 0x0fff
	xflagSkip     = 0x4000
	xflagIntent   = 0x2000
	headerSize    = 12
	extHeaderSize = 8
)

// Parse parses an index file's content. The trailing checksum is
// verified unless it is all zeros (git's index.skipHash).
func Parse(data []byte) (*Index, error) {
	if len(data) < headerSize+sha1.Size || !bytes.Equal(data[:4], []byte("DIRC")) {
		return nil, ErrFormat
	}
	body, sum := data[:len(data)-sha1.Size], data[len(data)-sha1.Size:]
	if !bytes.Equal(sum, make([]byte, sha1.Size)) {
		if got := sha1.Sum(body); !bytes.Equal(got[:], sum) {
			return nil, fmt.Errorf("%w: bad checksum", ErrFormat)
		}
	}
	ix := &Index{Version: binary.BigEndian.Uint32(data[4:])}
	copy(ix.sum[:], sum)
	if ix.Version < 2 || ix.Version > 4 {
		return nil, ErrFormat
	}
	n := binary.BigEndian.Uint32(data[8:])
	// Every entry takes at least entryFixed+1 bytes (v4: one less).
	if uint64(n) > uint64(len(body))/(entryFixed) {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrFormat, n, len(body))
	}
	ix.Entries = make([]Entry, 0, n)
	off := headerSize
	var prev []byte
	unnamed := false
	for i := uint32(0); i < n; i++ {
		if len(body)-off < entryFixed {
			return nil, fmt.Errorf("%w: entry %d cut short", ErrFormat, i)
		}
		b := body[off:]
		u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
		e := Entry{
			CtimeSec: u(0), CtimeNsec: u(1), MtimeSec: u(2), MtimeNsec: u(3),
			Dev: u(4), Ino: u(5), Mode: u(6), UID: u(7), GID: u(8), Size: u(9),
		}
		copy(e.ID[:], b[40:60])
		flags := binary.BigEndian.Uint16(b[60:])
		e.AssumeValid = flags&flagValid != 0
		e.Stage = int(flags&flagStage) >> 12
		p := entryFixed
		if flags&flagExtended != 0 {
			if ix.Version < 3 || len(b) < p+2 {
				return nil, fmt.Errorf("%w: entry %d: bad extended flags", ErrFormat, i)
			}
			x := binary.BigEndian.Uint16(b[p:])
			e.SkipWorktree = x&xflagSkip != 0
			e.IntentToAdd = x&xflagIntent != 0
			p += 2
		}
		if ix.Version == 4 {
			// The path is the previous one less its last strip bytes,
			// then a NUL-terminated suffix; no padding.
			strip, k := varint(b[p:])
			if k == 0 || strip > uint64(len(prev)) {
				return nil, fmt.Errorf("%w: entry %d: bad path prefix", ErrFormat, i)
			}
			p += k
			end := bytes.IndexByte(b[p:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d: path not terminated", ErrFormat, i)
			}
			path := make([]byte, 0, len(prev)-int(strip)+end)
			path = append(append(path, prev[:len(prev)-int(strip)]...), b[p:p+end]...)
			prev = path
			e.Path = string(path)
			p += end + 1
		} else {
			end := bytes.IndexByte(b[p:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d: path not terminated", ErrFormat, i)
			}
			e.Path = string(b[p : p+end])
			// NUL padding to a multiple of eight bytes, at least one.
			p = (p + end + 8) &^ 7
			if p > len(b) {
				return nil, fmt.Errorf("%w: entry %d cut short", ErrFormat, i)
			}
		}
		// A split index's replacing entries have no name of their own.
		if flags&flagNameMask != flagNameMask && int(flags&flagNameMask) != len(e.Path) {
			return nil, fmt.Errorf("%w: entry %d: bad path length", ErrFormat, i)
		}
		unnamed = unnamed || e.Path == ""
		ix.Entries = append(ix.Entries, e)
		off += p
	}
	for off < len(body) {
		if len(body)-off < extHeaderSize {
			return nil, fmt.Errorf("%w: extension cut short", ErrFormat)
		}
		sig := string(body[off : off+4])
		size := binary.BigEndian.Uint32(body[off+4:])
		off += extHeaderSize
		if uint64(size) > uint64(len(body)-off) {
			return nil, fmt.Errorf("%w: extension %q cut short", ErrFormat, sig)
		}
		switch sig {
		case "link":
			l, err := parseLink(body[off : off+int(size)])
			if err != nil {
				return nil, err
			}
			ix.Split, ix.link = true, l
		case "sdir":
			ix.Sparse = true
		case "TREE":
			ix.Tree, ix.TreeKnown = cacheTreeRoot(body[off : off+int(size)])
		}
		off += int(size)
	}
	if unnamed && !ix.Split {
		return nil, fmt.Errorf("%w: an entry without a path", ErrFormat)
	}
	return ix, nil
}

// cacheTreeRoot reads the root of a "TREE" extension: its first entry,
// an empty path, NUL, the count of index entries it covers in ASCII
// decimal (-1 once invalidated), a space, the count of its subtrees, a
// newline, then, when valid, the tree's id. Anything else is unknown.
func cacheTreeRoot(b []byte) (id [sha1.Size]byte, ok bool) {
	if len(b) < 1 || b[0] != 0 {
		return id, false
	}
	b = b[1:]
	sp := bytes.IndexByte(b, ' ')
	nl := bytes.IndexByte(b, '\n')
	if sp <= 0 || nl < sp {
		return id, false
	}
	for _, c := range b[:sp] {
		if c < '0' || c > '9' {
			return id, false // "-1" among them: invalidated
		}
	}
	if len(b) < nl+1+sha1.Size {
		return id, false
	}
	copy(id[:], b[nl+1:])
	return id, true
}

// varint decodes git's offset encoding (index v4 path prefixes) and
// returns the value and the bytes it took, 0 when malformed.
func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 0x7f)
	k := 1
	for c&0x80 != 0 {
		if k >= len(b) || k > 9 {
			return 0, 0
		}
		v++
		c = b[k]
		k++
		v = v<<7 | uint64(c&0x7f)
	}
	return v, k
}

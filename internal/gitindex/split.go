package gitindex

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"path/filepath"
	"strings"
)

// link is a split index's link extension: the shared index it builds on
// and which of that index's entries it deletes and replaces.
type link struct {
	shared [sha1.Size]byte
	// deleted and replaced are EWAH bitmaps of positions in the shared
	// index's entries, checked in form but decoded only against the
	// shared index (ewahBits' limit); nil when the extension has none.
	deleted, replaced []byte
}

// parseLink parses a link extension's payload: the shared index's id,
// then, optionally, an EWAH bitmap of deleted entries and one of replaced
// entries.
func parseLink(b []byte) (*link, error) {
	if len(b) < sha1.Size {
		return nil, fmt.Errorf("%w: link extension too short", ErrFormat)
	}
	l := &link{}
	copy(l.shared[:], b)
	b = b[sha1.Size:]
	if len(b) == 0 {
		return l, nil
	}
	n, err := ewahLen(b)
	if err != nil {
		return nil, fmt.Errorf("%w: link extension's delete bitmap: %v", ErrFormat, err)
	}
	l.deleted, b = b[:n], b[n:]
	if n, err = ewahLen(b); err != nil {
		return nil, fmt.Errorf("%w: link extension's replace bitmap: %v", ErrFormat, err)
	}
	if n != len(b) {
		return nil, fmt.Errorf("%w: %d bytes after the link extension's bitmaps", ErrFormat, len(b)-n)
	}
	l.replaced = b
	return l, nil
}

// An EWAH-compressed bitmap as git writes it is a 32-bit size in bits, a
// 32-bit count of 64-bit words, the words, and the position of the last
// run-length word, all big-endian. A word is a run-length word (bit 0:
// the run's bit; bits 1-32: the run's length in words; bits 33-63: how
// many literal words follow) or a literal word, whose bit k is position
// 64·w+k.

// ewahLen returns how many bytes the EWAH bitmap at the start of b takes.
func ewahLen(b []byte) (int, error) {
	if len(b) < 12 {
		return 0, errors.New("cut short")
	}
	words := uint64(binary.BigEndian.Uint32(b[4:]))
	if words > uint64(len(b)-12)/8 {
		return 0, fmt.Errorf("%d words in %d bytes", words, len(b))
	}
	return 8 + 8*int(words) + 4, nil
}

// ewahBits decodes the EWAH bitmap b and returns the positions of its set
// bits, ascending. A set bit at limit or past it, or past the bitmap's own
// size, is an error, found before any position is kept for it: a few
// bytes could otherwise ask for billions.
func ewahBits(b []byte, limit int) ([]int, error) {
	if b == nil {
		return nil, nil
	}
	n, err := ewahLen(b)
	if err != nil {
		return nil, err
	}
	size := uint64(binary.BigEndian.Uint32(b))
	bound := min(size, uint64(limit))
	words := uint64(n-12) / 8
	w := func(i uint64) uint64 { return binary.BigEndian.Uint64(b[8+8*i:]) }
	var set []int
	var pos uint64
	for i := uint64(0); i < words; {
		rlw := w(i)
		i++
		run, literals := (rlw>>1)&0xffffffff, rlw>>33
		if rlw&1 != 0 && run > 0 {
			if pos+run*64 > bound {
				return nil, fmt.Errorf("a run of set bits past bit %d", bound)
			}
			for k := range run * 64 {
				set = append(set, int(pos+k))
			}
		}
		pos += run * 64
		if literals > words-i {
			return nil, fmt.Errorf("%d literal words past the end", literals)
		}
		for ; literals > 0; literals-- {
			for v := w(i); v != 0; v &= v - 1 {
				p := pos + uint64(bits.TrailingZeros64(v))
				if p >= bound {
					return nil, fmt.Errorf("bit %d set, past bit %d", p, bound)
				}
				set = append(set, int(p))
			}
			i++
			pos += 64
		}
		if pos > maxBits {
			return nil, fmt.Errorf("more than %d bits", uint64(maxBits))
		}
	}
	return set, nil
}

// maxBits bounds the positions an EWAH bitmap may reach: an index has at
// most as many entries as fit in its 32-bit count.
const maxBits = 1 << 32

// ReadWhole reads the index file at path as Read does and, when it is
// the small part of a split index, merges it with its shared part,
// gitDir's sharedindex file, as git does: the entries the link extension
// replaces take the shared entries' places (and names), those it deletes
// go, and the rest of the small part's entries are added in order. The
// result is not Split. ModTime is the small part's, which git writes
// whenever the index changes.
func ReadWhole(path, gitDir string) (*File, error) {
	return ReadWholeWith(path, gitDir, nil)
}

// A Shared is the shared part of a split index, read ahead of the small
// part it goes with (git rewrites the small part far more often).
type Shared struct {
	id [sha1.Size]byte
	ix *Index
}

// ReadShared reads the shared part of the split index at path as the
// small part names it now, for a ReadWholeWith to come; nil when the
// index is not split or needs no shared part.
func ReadShared(path, gitDir string) (*Shared, error) {
	f, err := Read(path)
	if err != nil || !f.Split || f.link.shared == [sha1.Size]byte{} {
		return nil, err
	}
	ix, err := readShared(gitDir, f.link.shared)
	if err != nil {
		return nil, err
	}
	return &Shared{id: f.link.shared, ix: ix}, nil
}

// ReadWholeWith is ReadWhole taking the shared part from s when the small
// part still names it (s may be nil). s is used up: its entries become
// the result's.
func ReadWholeWith(path, gitDir string, s *Shared) (*File, error) {
	f, err := Read(path)
	if err != nil || !f.Split {
		return f, err
	}
	l := f.link
	if l.shared == [sha1.Size]byte{} {
		// A split index that needs no shared part.
		f.Index, err = merge(&Index{Version: f.Version}, f.Index)
		return f, err
	}
	var shared *Index
	if s != nil && s.id == l.shared && s.ix != nil {
		shared, s.ix = s.ix, nil
	} else if shared, err = readShared(gitDir, l.shared); err != nil {
		return nil, err
	}
	if f.Index, err = merge(shared, f.Index); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return f, nil
}

// readShared reads the shared index called id in gitDir.
func readShared(gitDir string, id [sha1.Size]byte) (*Index, error) {
	name := hex.EncodeToString(id[:])
	sharedPath := filepath.Join(gitDir, "sharedindex."+name)
	shared, err := Read(sharedPath)
	if err != nil {
		return nil, err
	}
	if shared.Split {
		return nil, fmt.Errorf("read %s: %w: a shared index that is split itself", sharedPath, ErrFormat)
	}
	if shared.sum != id {
		return nil, fmt.Errorf("read %s: %w: its checksum is not %s", sharedPath, ErrFormat, name)
	}
	return shared.Index, nil
}

// merge applies a split index's small part to its shared part, whose
// entries it changes.
func merge(shared, small *Index) (*Index, error) {
	l := small.link
	base := shared.Entries // shared is merge's to change
	deleted, err := ewahBits(l.deleted, len(base))
	if err != nil {
		return nil, fmt.Errorf("%w: link extension's delete bitmap: %v", ErrFormat, err)
	}
	replaced, err := ewahBits(l.replaced, len(base))
	if err != nil {
		return nil, fmt.Errorf("%w: link extension's replace bitmap: %v", ErrFormat, err)
	}
	gone := make([]bool, len(base))
	for _, p := range deleted {
		if p >= len(base) {
			return nil, fmt.Errorf("%w: deleting entry %d of %d", ErrFormat, p, len(base))
		}
		gone[p] = true
	}
	if len(replaced) > len(small.Entries) {
		return nil, fmt.Errorf("%w: %d replacements, %d entries", ErrFormat, len(replaced), len(small.Entries))
	}
	for i, p := range replaced {
		if p >= len(base) || gone[p] {
			return nil, fmt.Errorf("%w: replacing entry %d of %d", ErrFormat, p, len(base))
		}
		e := small.Entries[i]
		if e.Path != "" {
			return nil, fmt.Errorf("%w: a replacing entry with a name", ErrFormat)
		}
		e.Path = base[p].Path
		base[p] = e
	}
	kept := base
	if len(deleted) > 0 {
		kept = base[:0]
		for i := range base {
			if !gone[i] {
				kept = append(kept, base[i])
			}
		}
	}
	added := small.Entries[len(replaced):]
	if len(added) == 0 {
		return &Index{Version: small.Version, Sparse: small.Sparse || shared.Sparse, Entries: kept}, nil
	}
	out := &Index{Version: small.Version, Sparse: small.Sparse || shared.Sparse, Entries: make([]Entry, 0, len(kept)+len(added))}
	// Both are in git's order (by name, then stage); an added entry
	// takes the place of a kept one with its name and stage.
	i, j := 0, 0
	for i < len(kept) || j < len(added) {
		if j < len(added) && added[j].Path == "" {
			return nil, fmt.Errorf("%w: an added entry without a name", ErrFormat)
		}
		c := 1 // what is left is added
		switch {
		case j == len(added):
			c = -1
		case i < len(kept):
			c = compare(&kept[i], &added[j])
		}
		switch {
		case c < 0:
			out.Entries = append(out.Entries, kept[i])
			i++
		case c == 0:
			out.Entries = append(out.Entries, added[j])
			i, j = i+1, j+1
		default:
			out.Entries = append(out.Entries, added[j])
			j++
		}
	}
	return out, nil
}

// compare orders entries as git's index does: by name byte by byte, then
// by stage.
func compare(a, b *Entry) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return a.Stage - b.Stage
}

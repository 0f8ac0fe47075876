package stall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/gitindex"
)

// A RefreshedIndex is a git index that git brought up to date with the
// working tree (git status, then git update-index or git add -A of what
// it found changed, but for the paths Stale names) after the Tracker's
// first walk called watching, as a snapshot of the tree does: each entry
// at stage 0 not Stale stands for its file as git found it at some
// moment since the walk started watching, and any change to the file
// after that moment is one the kernel reports. Its paths are relative to
// the Tracker's directory, the top of the repository.
type RefreshedIndex struct {
	Path   string // the index file
	GitDir string // the git directory that holds its shared part, if split
	// Stale reports the paths whose entries git was not asked to bring
	// up to date; nil when there are none.
	Stale func(rel string) bool
}

// AwaitIndex makes the next Start's walk wait, once it watches every
// directory, to hear whether the index at where (its Path, GitDir and
// Stale) was refreshed since, and if so take from it the state of every
// file instead of examining each one (at 100,000 files, the stat calls
// and the comparison with git's own index were most of a task's start);
// meanwhile it reads what it can ahead (the index's shared part, git's
// configuration). Told false, or given an index it cannot use (split
// without its shared part, a sparse one, or where git converts content
// or ignores the executable bit or symlinks), the walk examines the
// files as before. The function is to be called once, from any
// goroutine; calls after the first do nothing. Call AwaitIndex before
// Start.
func (t *Tracker) AwaitIndex(where RefreshedIndex) func(refreshed bool) {
	ch := make(chan bool, 1)
	t.offered, t.awaiting = ch, &where
	var once sync.Once
	return func(refreshed bool) {
		once.Do(func() { ch <- refreshed })
	}
}

// indexRead is readIndex's answer.
type indexRead struct {
	ix  *userIndex
	err error
}

// userIndex is git's index of the tree, as fromIndex uses it.
type userIndex struct {
	file *gitindex.File
	// byPath holds the entries at stage 0, by path relative to the
	// Tracker's directory.
	byPath map[string]*gitindex.Entry
	// attrs is set when an attributes file may apply somewhere.
	attrs bool
}

// readIndex reads git's index of the tree; nil when git may convert
// content as it hashes it whatever the attributes (core.autocrlf), or
// the index is not one gitindex reads whole (split, sparse, or another
// format).
func (t *Tracker) readIndex(ctx context.Context) (*userIndex, error) {
	out, err := gitOutput(ctx, t.dir, nil, "rev-parse", "--show-prefix", "--git-path", "index", "--git-path", "info/attributes")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	prefix, indexPath, attrPath := lines[0], t.abs(lines[1]), t.abs(lines[2])
	conf, err := t.conversionConfig(ctx)
	if err != nil || conf.autocrlf {
		return nil, err
	}
	f, err := gitindex.Read(indexPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, gitindex.ErrFormat) {
			return nil, nil
		}
		return nil, err
	}
	if f.Split || f.Sparse {
		return nil, nil
	}
	return newUserIndex(f, prefix, append(conf.attrFiles, attrPath)), nil
}

// newUserIndex indexes f's entries at stage 0 by their paths less
// prefix; attrFiles are the attributes files outside the tree that may
// apply.
func newUserIndex(f *gitindex.File, prefix string, attrFiles []string) *userIndex {
	ix := &userIndex{file: f, byPath: make(map[string]*gitindex.Entry, len(f.Entries)), attrs: attrsMayApply(attrFiles, f.Entries)}
	for i := range f.Entries {
		ie := &f.Entries[i]
		if rel, ok := strings.CutPrefix(ie.Path, prefix); ok && ie.Stage == 0 {
			ix.byPath[rel] = ie
		}
	}
	return ix
}

// refreshed is a refreshed index as the first walk uses it.
type refreshed struct {
	entries []gitindex.Entry // in git's order
	user    []gitindex.Entry // git's own index (ahead.user)
	// attrs is set when an attributes file may apply somewhere.
	attrs bool
}

// ahead is what the walk reads while git refreshes the index.
type ahead struct {
	conf     gitConfig
	attrPath string // the repository's info/attributes
	shared   *gitindex.Shared
	// user are the entries of git's own index of the tree, in git's
	// order (nil when it has none): what git's ignore rules count as
	// tracked, which the snapshots' index need not agree with.
	user []gitindex.Entry
	err  error
}

// readAhead reads git's configuration and the index's shared part as it
// is before the refresh (git rarely writes a new one).
func (t *Tracker) readAhead(ctx context.Context, ri *RefreshedIndex) ahead {
	var a ahead
	if a.conf, a.err = t.conversionConfig(ctx); a.err != nil {
		return a
	}
	out, err := gitOutput(ctx, t.dir, nil, "rev-parse", "--absolute-git-dir", "--git-path", "index", "--git-path", "info/attributes")
	if err != nil {
		a.err = err
		return a
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		a.err = fmt.Errorf("git rev-parse: unexpected output %q", out)
		return a
	}
	a.attrPath = t.abs(lines[2])
	switch user, err := gitindex.ReadWhole(t.abs(lines[1]), lines[0]); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		a.err = err
		return a
	case user.Sparse:
		a.err = errors.New("git's index is sparse")
		return a
	default:
		a.user = user.Entries
	}
	// Not there, or not usable: the index is read whole after.
	a.shared, _ = gitindex.ReadShared(ri.Path, ri.GitDir)
	return a
}

// readRefreshed reads a refreshed index for the walk; nil when the walk
// cannot take files' states from it: git converts content as it hashes
// it whatever the attributes (core.autocrlf), does not record the
// executable bit (core.fileMode) or symlinks (core.symlinks) as they are,
// or the index is sparse or not one gitindex reads.
func (t *Tracker) readRefreshed(ri *RefreshedIndex, a ahead) (*refreshed, error) {
	if a.err != nil || a.conf.autocrlf || !a.conf.exact {
		return nil, a.err
	}
	f, err := gitindex.ReadWholeWith(ri.Path, ri.GitDir, a.shared)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, gitindex.ErrFormat) {
			t.logger.Debug("not using the refreshed index", "err", err)
			return nil, nil
		}
		return nil, err
	}
	if f.Sparse {
		return nil, nil
	}
	attrs := attrsMayApply(append(a.conf.attrFiles, a.attrPath), f.Entries)
	return &refreshed{entries: f.Entries, user: a.user, attrs: attrs}, nil
}

// attrsMayApply reports whether an attributes file may apply somewhere:
// one of attrFiles (outside the tree) is not empty, or the index has a
// .gitattributes.
func attrsMayApply(attrFiles []string, entries []gitindex.Entry) bool {
	return slices.ContainsFunc(attrFiles, nonEmptyFile) ||
		slices.ContainsFunc(entries, func(e gitindex.Entry) bool { return path.Base(e.Path) == ".gitattributes" })
}

// takeEntry is the file ie stands for, taken from the index: not when
// the index's owner says git was not asked to bring it up to date
// (ri.Stale), git's stat check skips it, or it is not a plain file, an
// executable or a symlink.
func takeEntry(ri *RefreshedIndex, ie *gitindex.Entry) (treeEntry, bool) {
	var kind byte
	switch ie.Mode {
	case 0o100644:
		kind = 'f'
	case 0o100755:
		kind = 'x'
	case 0o120000:
		kind = 'l'
	default:
		return treeEntry{}, false
	}
	if ie.AssumeValid || ie.SkipWorktree || ie.IntentToAdd || (ri.Stale != nil && ri.Stale(ie.Path)) {
		return treeEntry{}, false
	}
	// Never read: no absolute path (at 100,000 files, the joins were a
	// sixth of taking them).
	e := treeEntry{rel: ie.Path, kind: kind, known: true}
	copy(e.digest[:], ie.ID[:])
	return e, true
}

// fromRefreshed describes the files the walk listed (rels) and those in
// the directories it did not read (leaves), in one pass over the
// refreshed index: it takes each file's state from ix where the index has
// it at stage 0, up to date (not ri.Stale, not marked as git's stat check
// skips it) and as a plain file, an executable or a symlink. The rest of
// rels, less what git ignores, and the leaves' files it cannot take, it
// examines (entry). It returns how many it took from ix. Where attributes
// may apply, it takes none that git check-attr says git converts as it
// hashes.
func (t *Tracker) fromRefreshed(ctx context.Context, ri *RefreshedIndex, ix *refreshed, rels []string, leaves map[string]bool) ([]treeEntry, int, error) {
	pending := make(map[string]bool, len(rels)) // rels not taken yet
	for _, rel := range rels {
		pending[rel] = true
	}
	out := make([]treeEntry, 0, len(ix.entries))
	// examine are files to look at; maybe, to look at unless git
	// ignores them; untracked, the snapshots' entries git does not track.
	var examine, maybe []string
	var untracked map[string]*gitindex.Entry
	inLeaf := func(rel string) bool {
		dir := ""
		if k := strings.LastIndexByte(rel, '/'); k >= 0 {
			dir = rel[:k]
		}
		return leaves[dir] && !t.skip(rel)
	}
	// The snapshots' index and git's own, side by side (both in git's
	// order): git's rules count a file tracked when git's own index has
	// it, whatever the snapshots' has.
	user, j := ix.user, 0
	for i := range ix.entries {
		ie := &ix.entries[i]
		rel := ie.Path
		tracked := false
		for ; j < len(user) && user[j].Path <= rel; j++ {
			if user[j].Path == rel {
				tracked = true
			} else if inLeaf(user[j].Path) {
				examine = append(examine, user[j].Path) // git tracks it; the snapshots' index lacks it
			}
		}
		if ie.Stage != 0 {
			continue
		}
		// A file of a directory made since the walk is not taken: the
		// kernel reports the directory, which is walked then.
		if !pending[rel] && !inLeaf(rel) {
			continue
		}
		if !tracked {
			// Untracked for git: the snapshots' index may hold a file
			// git now ignores (staged before a .gitignore named it).
			// Taken once git says it does not.
			if untracked == nil {
				untracked = map[string]*gitindex.Entry{}
			}
			untracked[rel] = ie
			if !pending[rel] {
				maybe = append(maybe, rel)
			}
			continue
		}
		e, ok := takeEntry(ri, ie)
		if !ok {
			if !pending[rel] {
				examine = append(examine, rel) // a leaf's: rels has the others
			}
			continue
		}
		delete(pending, rel)
		out = append(out, e)
	}
	for ; j < len(user); j++ {
		if inLeaf(user[j].Path) {
			examine = append(examine, user[j].Path)
		}
	}
	// What the walk listed that the index lacks, less what git ignores
	// (walkLevels listed it; git has no entry for it). Ignored or not, a
	// file added since git's refresh is reported by the kernel.
	rest, err := t.dropIgnored(ctx, append(slices.Collect(maps.Keys(pending)), maybe...))
	if err != nil {
		return nil, 0, err
	}
	rest = slices.DeleteFunc(rest, func(rel string) bool {
		if ie := untracked[rel]; ie != nil {
			if e, ok := takeEntry(ri, ie); ok {
				out = append(out, e)
				return true
			}
		}
		return false
	})
	// An attributes file applies whether git tracks or ignores it: one
	// the index lacks is in rels or in a directory not read.
	attrs := ix.attrs || slices.ContainsFunc(rels, func(rel string) bool { return path.Base(rel) == ".gitattributes" })
	for dir := range leaves {
		attrs = attrs || exists(filepath.Join(t.dir, filepath.FromSlash(dir), ".gitattributes"))
	}
	if attrs && len(out) > 0 {
		rels := make([]string, len(out))
		for i := range out {
			rels[i] = out[i].rel
		}
		conv, err := converted(ctx, t.dir, rels)
		if err != nil {
			return nil, 0, err
		}
		out = slices.DeleteFunc(out, func(e treeEntry) bool {
			if conv[e.rel] {
				examine = append(examine, e.rel)
			}
			return conv[e.rel]
		})
	}
	slices.Sort(examine)
	examined, err := t.entries(ctx, append(slices.Compact(examine), rest...))
	if err != nil {
		return nil, 0, err
	}
	n := len(out)
	return append(out, examined...), n, nil
}

// fromIndex takes from git's index the digests of the files among entries
// that git's stat check finds unchanged since git hashed them (the index
// entry's blob id is then the content's: blobID), marking them known, and
// returns how many it took. Where attributes may apply, it takes none
// that git check-attr says git converts as it hashes (text, eol, crlf,
// filter, ident, working-tree-encoding). Called once the walk's watches
// are in place and its stat calls made, a file changed after its stat is
// reported by the kernel and read on the next Hash.
func (t *Tracker) fromIndex(ctx context.Context, ix *userIndex, entries []treeEntry) (int, error) {
	attrs := ix.attrs
	var known []*treeEntry
	for i := range entries {
		e := &entries[i]
		if path.Base(e.rel) == ".gitattributes" {
			attrs = true // untracked, it applies all the same
		}
		if ie := ix.byPath[e.rel]; ie != nil && e.info != nil && ie.Unchanged(e.info, ix.file.ModTime) {
			known = append(known, e)
		}
	}
	if attrs && len(known) > 0 {
		rels := make([]string, len(known))
		for i, e := range known {
			rels[i] = e.rel
		}
		conv, err := converted(ctx, t.dir, rels)
		if err != nil {
			return 0, err
		}
		known = slices.DeleteFunc(known, func(e *treeEntry) bool { return conv[e.rel] })
	}
	for _, e := range known {
		e.digest = [32]byte{}
		copy(e.digest[:], ix.byPath[e.rel].ID[:])
		e.known = true
	}
	return len(known), nil
}

func (t *Tracker) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(t.dir, p)
}

func nonEmptyFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Size() > 0
}

// gitConfig is what git's configuration says about reading the tree's
// files through its index.
type gitConfig struct {
	// autocrlf is set when core.autocrlf asks git to convert line
	// endings as it hashes.
	autocrlf bool
	// exact is set unless core.fileMode or core.symlinks is false: git
	// then keeps an entry's mode as it was, whatever the file's.
	exact bool
	// attrFiles are the attributes files outside the repository that
	// could ask git to convert (core.attributesFile, or the default
	// per-user and system ones).
	attrFiles []string
}

// conversionConfig reads gitConfig.
func (t *Tracker) conversionConfig(ctx context.Context) (gitConfig, error) {
	conf := gitConfig{exact: true}
	out, err := gitOutput(ctx, t.dir, nil, "config", "-z", "--get-regexp", `^core\.(autocrlf|attributesfile|filemode|symlinks)$`)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: none is set
		return conf, err
	}
	global := ""
	for rec := range strings.SplitSeq(string(out), "\x00") {
		key, value, valued := strings.Cut(rec, "\n")
		// A key without "=" is true; an empty value is false.
		falsy := valued && slices.Contains([]string{"false", "no", "off", "0", ""}, strings.ToLower(value))
		switch strings.ToLower(key) {
		case "core.autocrlf":
			conf.autocrlf = !falsy
		case "core.filemode", "core.symlinks":
			if falsy {
				conf.exact = false
			}
		case "core.attributesfile":
			global = value
			if rest, ok := strings.CutPrefix(value, "~/"); ok {
				home, _ := os.UserHomeDir()
				global = filepath.Join(home, rest)
			}
		}
	}
	if global == "" {
		if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
			global = filepath.Join(xdg, "git", "attributes")
		} else if home, err := os.UserHomeDir(); err == nil {
			global = filepath.Join(home, ".config", "git", "attributes")
		}
	}
	conf.attrFiles = []string{global, "/etc/gitattributes", "/usr/local/etc/gitattributes"}
	return conf, nil
}

// conversionAttrs are the attributes that make git change content as it
// hashes it.
var conversionAttrs = []string{"text", "eol", "crlf", "filter", "ident", "working-tree-encoding"}

// converted returns which of rels git converts as it hashes them: any
// conversion attribute set (git check-attr: not unspecified or unset).
func converted(ctx context.Context, dir string, rels []string) (map[string]bool, error) {
	in := []byte(strings.Join(rels, "\x00") + "\x00")
	out, err := gitOutput(ctx, dir, in, append([]string{"check-attr", "-z", "--stdin"}, conversionAttrs...)...)
	if err != nil {
		return nil, err
	}
	conv := map[string]bool{}
	f := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		if v := f[i+2]; v != "unspecified" && v != "unset" {
			conv[f[i]] = true
		}
	}
	return conv, nil
}

// awaitRefreshed waits to hear whether the index AwaitIndex named was
// refreshed, reading ahead meanwhile, and describes the files from it
// (fromRefreshed); took is false when it was not or cannot be used, and
// the files (and the leaves') are still to be examined.
func (t *Tracker) awaitRefreshed(ctx context.Context, offered <-chan bool, ri *RefreshedIndex, rels []string, leaves map[string]bool) (entries []treeEntry, took bool, err error) {
	read := make(chan ahead, 1)
	go func() { read <- t.readAhead(ctx, ri) }()
	var refreshed bool
	select {
	case refreshed = <-offered:
	case <-ctx.Done():
	}
	a := <-read
	if !refreshed || ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	ix, err := t.readRefreshed(ri, a)
	if err != nil || ix == nil {
		if err != nil {
			t.logger.Debug("not using the refreshed index", "err", err)
		}
		return nil, false, ctx.Err()
	}
	entries, n, err := t.fromRefreshed(ctx, ri, ix, rels, leaves)
	if err != nil {
		t.logger.Debug("not using the refreshed index", "err", err)
		return nil, false, ctx.Err()
	}
	t.fromRefreshedCount = n
	t.logger.Debug("the first walk took the files from the refreshed index", "files", n, "examined", len(entries)-n)
	return entries, true, nil
}

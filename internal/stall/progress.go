package stall

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math/bits"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/git"
)

// WalkEnv is the environment variable that, set to 1, makes every Tracker
// use the reference full walk (TreeHash) instead of watching the tree: for
// benchmarks comparing the two and for file systems that do not report
// changes.
const WalkEnv = "RALPH_STALL_WALK"

// A Tracker hashes one workspace after every iteration for the no-progress
// detector, at a cost that follows what changed rather than the size of the
// tree. The files it hashes are those TreeHash hashes with skip, less every
// path git ignores (the untracked files and directories `git ls-files
// --others --ignored --exclude-standard --directory` lists): ignored files
// are build output, caches and dependencies, never progress, and ignored
// directories are never walked.
//
// In a git working tree on Linux a Tracker walks the tree once (reading
// only the files git's index does not vouch for: fromIndex; or, told of
// an index git refreshed after its watches were in place, taking every
// file from that: AwaitIndex), then watches its directories (fsnotify
// over inotify) and, on each Hash, rereads only the paths the kernel
// reported changed; git is asked about new paths only (are they
// ignored?). Files in a nested repository or submodule are hashed, as git
// ls-files --others never goes into one. Its hash is an order-independent sum of per-file hashes, so it
// differs from TreeHash's value, but it changes exactly when TreeHash over
// the same files changes (the property tests hold it to that). A change the
// kernel does not report (a write through a shared mapping, a hard link
// from outside the tree, a network file system) goes unseen until the next
// rescan; an overflowing event queue or an edited .gitignore triggers one.
//
// Elsewhere (no git, no inotify, the watch limit reached, WalkEnv set) it
// falls back to a TreeHasher with skip, which stats every file on every Hash
// and, knowing nothing of git, hashes ignored files too. When it falls back
// in the middle of a task, the hash changes once although the tree did not.
//
// Changes hands what the kernel reported to the iteration snapshots, so
// that recording an iteration's tree needs no git status.
//
// A Tracker is not safe for concurrent use. Close releases the watch.
type Tracker struct {
	dir    string
	skip   func(rel string) bool
	logger *slog.Logger

	walk   bool // fall back to the full walk from now on
	git    bool // dir is in a git working tree (known once started)
	hasher *TreeHasher

	w       *watcher            // nil until started, and in walk mode
	files   map[string][32]byte // rel → the file's share of the sum
	ignored map[string]bool     // paths git ignores, found so far
	sum     sum256
	rescans int // walks after the first, for tests

	shareBuf []byte // put's

	// For Changes: the files seen changed since its last call, whether
	// they are the whole story, and the directories skip left out that
	// git does not ignore (nothing in them is seen change).
	pending map[string]bool
	seen    bool
	blind   map[string]bool

	// watching, set during Start, is called once the first walk watches
	// every directory it enters, before it reads the files.
	watching func()

	// fromIndexCount is how many digests the last whole walk took from
	// git's index (for tests); noIndex makes it take none.
	fromIndexCount int
	noIndex        bool

	// offered, when not nil, is where the next whole walk waits to hear
	// whether the index awaiting names was refreshed (AwaitIndex);
	// fromRefreshedCount is how many
	// files the last whole walk took from one (for tests).
	offered            chan bool
	awaiting           *RefreshedIndex
	fromRefreshedCount int
	// leafCount is how many directories the last level walk watched
	// without reading them (for tests).
	leafCount int
	// repos are the directories of the tree that hold a .git of their
	// own (a nested repository, a submodule): git's ignore rules and
	// index stop there, so nothing in them is asked about or taken
	// from an index, as git ls-files --others never goes into them.
	repos map[string]bool
}

// NewTracker returns a Tracker of the tree at dir, leaving out the paths
// skip reports (slash-separated, relative to dir; nil skips nothing) as
// TreeHash does. It does nothing until the first Hash. A nil logger
// discards logs.
func NewTracker(dir string, skip func(rel string) bool, logger *slog.Logger) *Tracker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if skip == nil {
		skip = func(string) bool { return false }
	}
	return &Tracker{
		dir:    dir,
		skip:   skip,
		logger: logger.With("component", "stall"),
		walk:   os.Getenv(WalkEnv) == "1",
		hasher: NewTreeHasher(),
	}
}

// Hash returns the hash of the tracked files as they are now: equal to the
// previous Hash's value exactly when no tracked file was added, removed, or
// changed in content or executable bit since.
func (t *Tracker) Hash(ctx context.Context) (string, error) {
	if !t.walk {
		h, err := t.watchHash(ctx)
		if err == nil {
			return h, nil
		}
		if ctx.Err() != nil {
			t.stop() // events may be lost: walk again next time
			return "", err
		}
		t.logger.Info("watching the workspace failed; hashing the whole tree each iteration from now on", "err", err)
		t.stop()
		t.walk = true
	}
	return t.walkHash(ctx)
}

// Start is the first Hash, for a caller that wants to read the tree
// itself alongside it: watching, when not nil, is called (from Start's
// goroutine) once every directory of the tree is watched and before the
// walk reads the files. From then on every change is reported, so a read
// of the tree started after watching plus what Changes reports after the
// next Hash is the tree as it is. watching is not called when the
// Tracker cannot watch (it hashes the whole tree each time instead).
func (t *Tracker) Start(ctx context.Context, watching func()) (string, error) {
	t.watching = watching
	defer func() { t.watching = nil }()
	return t.Hash(ctx)
}

// Changes returns the files (slash-separated, relative to the tree) that
// the Hash calls since the last Changes saw created, changed or removed,
// skip notwithstanding but less what git ignores and .git, and whether
// they are the whole story: not when the tree was walked since (the first
// Hash, a rescan, walk mode), when a directory came or went, or when skip
// leaves out a directory git does not ignore. A snapshot of the tree
// taken at the previous call plus these paths is the tree at the last
// Hash.
func (t *Tracker) Changes() (paths []string, complete bool) {
	complete = t.seen && t.w != nil && !t.walk && len(t.blind) == 0
	paths = slices.Sorted(maps.Keys(t.pending))
	t.pending, t.seen = map[string]bool{}, true
	return paths, complete
}

// note adds the paths a drain reported, applied, to what Changes returns.
// wasDir are those of them that were watched directories before.
func (t *Tracker) note(changed, wasDir map[string]bool) {
	if t.pending == nil {
		t.pending = map[string]bool{}
	}
	for p := range changed {
		if path.Base(p) == ".git" {
			// A repository came or went inside the tree: git records it
			// as one entry, whose files are not the tree's.
			t.seen = false
			continue
		}
		if t.ignored[p] || t.inGit(p) {
			continue
		}
		if wasDir[p] {
			t.seen = false
			continue
		}
		if info, err := os.Lstat(filepath.Join(t.dir, filepath.FromSlash(p))); err == nil && info.IsDir() {
			t.seen = false
			continue
		}
		t.pending[p] = true
	}
}

// inGit reports whether rel lies in a .git directory.
func (t *Tracker) inGit(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// Close stops watching the tree.
func (t *Tracker) Close() error {
	t.stop()
	return nil
}

func (t *Tracker) stop() {
	if t.w != nil {
		t.w.close()
		t.w = nil
	}
}

// walkHash is the fallback: TreeHash with skip, as before the Tracker
// existed (it hashes what git ignores too).
func (t *Tracker) walkHash(ctx context.Context) (string, error) {
	return t.hasher.Hash(ctx, t.dir, t.skip)
}

// listIgnored runs `git ls-files --others --ignored --directory` in dir
// (limited to the pathspecs, taken literally, when there are some) and
// returns the paths it lists, relative to dir, directories without their
// trailing slash.
func listIgnored(ctx context.Context, dir string, pathspecs ...string) (map[string]bool, error) {
	set := map[string]bool{}
	for {
		// A few hundred at a time: the command line has a limit.
		batch := pathspecs[:min(len(pathspecs), maxPathspecs)]
		args := []string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}
		if len(batch) > 0 {
			args = append(append(args, "--"), batch...)
		}
		out, err := gitOutput(ctx, dir, nil, args...)
		if err != nil {
			return nil, err
		}
		for p := range strings.SplitSeq(string(out), "\x00") {
			if p != "" {
				set[strings.TrimSuffix(p, "/")] = true
			}
		}
		if pathspecs = pathspecs[len(batch):]; len(pathspecs) == 0 {
			return set, nil
		}
	}
}

// maxPathspecs is how many paths listIgnored puts on one command line.
const maxPathspecs = 500

// ignoredPaths is listIgnored less the directories listed only because
// every file in them is ignored now (git lists those too, and their files
// one by one): a file added to one later is not ignored, so the directory
// must be walked and watched. What stays are the directories an ignore
// pattern matches, and ignored files.
func ignoredPaths(ctx context.Context, dir string, pathspecs ...string) (map[string]bool, error) {
	set, err := listIgnored(ctx, dir, pathspecs...)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for p := range set {
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) == 0 {
		return set, nil
	}
	// A directory git lists whole holds no tracked file (git would list
	// its files one by one), so whether a pattern matches it needs no
	// look at the index, which at 100,000 files is most of the check.
	matched, err := checkIgnored(ctx, dir, dirs, "--no-index")
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if !matched[d] {
			delete(set, d)
		}
	}
	return set, nil
}

// checkIgnored returns which of paths (relative to dir) git ignores;
// flags go to git check-ignore.
func checkIgnored(ctx context.Context, dir string, paths []string, flags ...string) (map[string]bool, error) {
	in := []byte(strings.Join(paths, "\x00") + "\x00")
	out, err := gitOutput(ctx, dir, in, append([]string{"check-ignore", "-z", "--stdin"}, flags...)...)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return nil, nil // none is ignored
	}
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set, nil
}

// gitOutput runs a read-only git command in dir: it never refreshes or
// locks the user's index.
func gitOutput(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	o := git.Options{Stdin: stdin, ReadOnly: true}
	if args[0] == "ls-files" { // check-ignore takes paths, not pathspecs
		o.Env = []string{"GIT_LITERAL_PATHSPECS=1"}
	}
	return git.RunWith(ctx, dir, o, args...)
}

// watchHash is Hash by watching: the first call walks the tree and starts
// the watch; later calls apply the changes the kernel reported.
func (t *Tracker) watchHash(ctx context.Context) (string, error) {
	if t.w == nil {
		if err := t.start(ctx); err != nil {
			return "", err
		}
		return t.sum.String(), nil
	}
	changed, rescan, err := t.w.drain(ctx)
	if err != nil {
		return "", err
	}
	if !rescan {
		for p := range changed {
			if path.Base(p) == ".gitignore" {
				rescan = true // what is ignored may have changed
				break
			}
		}
	}
	if rescan {
		t.logger.Debug("rescanning the workspace")
		t.rescans++
		t.stop()
		if err := t.start(ctx); err != nil {
			return "", err
		}
		return t.sum.String(), nil
	}
	wasDir := map[string]bool{}
	for p := range changed {
		if t.w.watching(p) || t.blind[p] {
			wasDir[p] = true
		}
	}
	if err := t.apply(ctx, changed); err != nil {
		return "", err
	}
	t.note(changed, wasDir)
	return t.sum.String(), nil
}

// start walks the whole tree, watching every directory it enters.
func (t *Tracker) start(ctx context.Context) error {
	ignored := map[string]bool{}
	if t.offered == nil {
		// A walk that will take its files from a refreshed index asks
		// about what git ignores as it goes (walkLevels) instead.
		var err error
		if ignored, err = ignoredPaths(ctx, t.dir); err != nil {
			return fmt.Errorf("list ignored files: %w", err)
		}
	}
	w, err := newWatcher(t.dir)
	if err != nil {
		return err
	}
	t.w, t.ignored, t.files, t.sum = w, ignored, map[string][32]byte{}, sum256{}
	t.pending, t.seen, t.blind, t.repos = map[string]bool{}, false, map[string]bool{}, map[string]bool{}
	return t.scan(ctx, []string{""})
}

// excluded reports whether rel is never hashed: skipped, ignored, or in a
// .git directory.
func (t *Tracker) excluded(rel string) bool {
	if rel == "" {
		return false
	}
	if t.ignored[rel] || t.skip(rel) {
		return true
	}
	for part := range strings.SplitSeq(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// scan walks the directories roots (relative; "" is the tree), watching
// each directory before reading it so that nothing written meanwhile goes
// unseen, and adds every file found.
func (t *Tracker) scan(ctx context.Context, roots []string) error {
	var entries []treeEntry
	var files []string
	var walk func(rel string) error
	walk = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		abs := filepath.Join(t.dir, filepath.FromSlash(rel))
		if err := t.w.add(rel); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile; its parent reports it
			}
			return err
		}
		des, err := readDir(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return fmt.Errorf("read %s: %w", abs, err)
		}
		for _, d := range des {
			child := t.childOf(rel, d)
			if t.excluded(child) {
				if d.IsDir() && !t.ignored[child] && !t.inGit(child) {
					t.blind[child] = true
				}
				continue
			}
			if d.IsDir() {
				if err := walk(child); err != nil {
					return err
				}
				continue
			}
			files = append(files, child)
		}
		return nil
	}
	whole := len(roots) == 1 && roots[0] == ""
	offered, awaiting := t.offered, t.awaiting
	if whole {
		t.offered, t.awaiting = nil, nil
	}
	// The whole tree: what git's index vouches for needs no reading. The
	// index is read while the tree is walked, unless a refreshed one is
	// on its way.
	var index chan indexRead
	if whole && !t.noIndex && offered == nil {
		index = make(chan indexRead, 1)
		go func() {
			ix, err := t.readIndex(ctx)
			index <- indexRead{ix, err}
		}()
	}
	var err error
	var leaves map[string]bool
	late := func() error { return nil }
	if whole && offered != nil {
		var later []string
		files, leaves, later, err = t.walkLevels(ctx)
		t.leafCount = len(leaves)
		late = t.lateIgnored(ctx, later)
	} else {
		for _, r := range roots {
			if err = walk(r); err != nil {
				break
			}
		}
	}
	if err == nil && t.watching != nil {
		t.watching()
		t.watching = nil
	}
	t.fromRefreshedCount = 0
	took := false
	if err == nil && whole && offered != nil {
		entries, took, err = t.awaitRefreshed(ctx, offered, awaiting, files, leaves)
		if err == nil && !took {
			// walkLevels did not read the leaves, and left the ignored
			// files in.
			var more []string
			if more, err = t.leafFiles(leaves); err == nil {
				files, err = t.dropIgnored(ctx, append(files, more...))
			}
		}
		if err == nil && !took && !t.noIndex {
			index = make(chan indexRead, 1)
			ix, ierr := t.readIndex(ctx)
			index <- indexRead{ix, ierr}
		}
	}
	if err == nil && !took {
		entries, err = t.entries(ctx, files)
	}
	if index != nil {
		read := <-index
		if err == nil {
			n := 0
			if read.err == nil && read.ix != nil {
				n, read.err = t.fromIndex(ctx, read.ix, entries)
			}
			if read.err != nil {
				t.logger.Debug("not using git's index for the first walk", "err", read.err)
			}
			t.fromIndexCount = n
		}
	}
	if lerr := late(); err == nil {
		err = lerr
	}
	if err != nil {
		return err
	}
	if err := t.hasher.digest(ctx, entries); err != nil {
		return err
	}
	if whole && len(t.files) == 0 {
		t.addAll(entries)
		return nil
	}
	for _, e := range entries {
		if !e.gone {
			t.put(e)
		}
	}
	return nil
}

// addAll puts entries into an empty sum, as put does one by one, their
// shares hashed several at a time (at 100,000 files, one at a time was a
// third of a walk that takes them from an index).
func (t *Tracker) addAll(entries []treeEntry) {
	shares := make([][32]byte, len(entries))
	workers := min(runtime.GOMAXPROCS(0), 8)
	chunk := (len(entries) + workers - 1) / max(workers, 1)
	var wg sync.WaitGroup
	for lo := 0; lo < len(entries); lo += chunk {
		hi := min(lo+chunk, len(entries))
		wg.Go(func() {
			var buf []byte
			for i := lo; i < hi; i++ {
				e := &entries[i]
				buf = append(append(append(buf[:0], e.rel...), 0, e.kind, 0), e.digest[:]...)
				shares[i] = sha256.Sum256(buf)
			}
		})
	}
	wg.Wait()
	t.files = make(map[string][32]byte, len(entries))
	for i := range entries {
		if entries[i].gone {
			continue
		}
		if old, ok := t.files[entries[i].rel]; ok {
			t.sum.sub(old)
		}
		t.files[entries[i].rel] = shares[i]
		t.sum.add(shares[i])
	}
}

// walkLevels is the first walk of a Tracker that will take its files'
// states from a refreshed index (AwaitIndex), which knows what git does
// not ignore: instead of listing every path git ignores before it starts
// (at 100,000 files, git's listing took as long as the walk), it walks
// the tree a level at a time, watching each directory before it looks in
// it, and asks git which of each level's new directories it ignores
// before going into them (check-ignore, then noteIgnored; none in a nested
// repository, where git's rules stop). A directory with no subdirectory
// (leafDir) it watches but does not read: the index lists its files
// (leaves; at 100,000 files in a few directories, reading them was most
// of the walk). The files it returns include those git ignores; the
// index, or dropIgnored, leaves them out. later are the directories skip
// leaves out that an ignore pattern matches: whether git ignores them
// (or they are blind) is for lateIgnored to find out.
func (t *Tracker) walkLevels(ctx context.Context) (files []string, leaves map[string]bool, later []string, err error) {
	leaves = map[string]bool{}
	level := []string{""}
	for len(level) > 0 {
		var dirs []string
		for _, rel := range level {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, err
			}
			if err := t.w.add(rel); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed meanwhile; its parent reports it
				}
				return nil, nil, nil, err
			}
			des, leaf, err := t.readUnlessLeaf(rel)
			if err != nil {
				return nil, nil, nil, err
			}
			if leaf {
				leaves[rel] = true
				continue
			}
			for _, d := range des {
				child := t.childOf(rel, d)
				switch {
				case t.inGit(child):
				case d.IsDir():
					dirs = append(dirs, child)
				case !t.skip(child):
					files = append(files, child)
				}
			}
		}
		// Git's rules stop at a nested repository: what is in one is
		// not ignored.
		var asked []string
		for _, d := range dirs {
			if !t.inRepo(d) {
				asked = append(asked, d)
			}
		}
		var matched map[string]bool
		if len(asked) > 0 {
			if matched, err = checkIgnored(ctx, t.dir, asked, "--no-index"); err != nil {
				return nil, nil, nil, err
			}
		}
		// Whether a directory skip leaves out is ignored only decides
		// whether it is blind: asked after the walk (later).
		var ask []string
		for _, d := range dirs {
			if matched[d] && t.skip(d) {
				later = append(later, d)
			} else if matched[d] {
				ask = append(ask, d)
			}
		}
		if err := t.noteIgnored(ctx, ask); err != nil {
			return nil, nil, nil, err
		}
		level = level[:0]
		for _, d := range dirs {
			switch {
			case t.ignored[d]:
			case matched[d] && t.skip(d):
			case t.skip(d):
				t.blind[d] = true // git does not ignore it; skip does
			default:
				level = append(level, d)
			}
		}
	}
	return files, leaves, later, nil
}

// readUnlessLeaf reads the directory rel, unless it has no subdirectory
// (leafDir): then leaf is set and it is not read. A directory gone or
// not readable reads as empty.
func (t *Tracker) readUnlessLeaf(rel string) (des []fs.DirEntry, leaf bool, err error) {
	abs := filepath.Join(t.dir, filepath.FromSlash(rel))
	f, err := os.Open(abs)
	if err == nil {
		defer f.Close()
		// A leaf's files come from the index: not one in a nested
		// repository or holding a .git file (a submodule's), whose
		// files the index does not list.
		if leafDir(f) && !t.inRepo(rel) && !exists(filepath.Join(abs, ".git")) {
			return nil, true, nil
		}
		des, err = f.ReadDir(-1)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read %s: %w", abs, err)
	}
	return des, false, nil
}

// childOf is the path of the entry d of the directory rel, noting rel as
// a nested repository (repos) when d is its .git.
func (t *Tracker) childOf(rel string, d fs.DirEntry) string {
	if rel == "" {
		return d.Name()
	}
	if d.Name() == ".git" {
		t.repos[rel] = true
	}
	return rel + "/" + d.Name()
}

// exists reports whether there is anything at p (not following a link).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// inRepo reports whether rel lies in a nested repository of the tree
// (repos): in one of its directories, or is one.
func (t *Tracker) inRepo(rel string) bool {
	if len(t.repos) == 0 {
		return false
	}
	for p := rel; p != "." && p != ""; p = path.Dir(p) {
		if t.repos[p] {
			return true
		}
	}
	return false
}

// leafFiles lists the files of the directories walkLevels did not read,
// for a walk that has no index to take them from.
func (t *Tracker) leafFiles(leaves map[string]bool) ([]string, error) {
	var files []string
	for rel := range leaves {
		abs := filepath.Join(t.dir, filepath.FromSlash(rel))
		des, err := readDir(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				continue
			}
			return nil, fmt.Errorf("read %s: %w", abs, err)
		}
		for _, d := range des {
			child := t.childOf(rel, d)
			// A directory made since is reported by the kernel.
			if !d.IsDir() && !t.inGit(child) && !t.skip(child) {
				files = append(files, child)
			}
		}
	}
	return files, nil
}

// noteIgnored asks git which of dirs, each matched by an ignore pattern,
// it ignores, and notes what it lists: git ls-files --others --ignored
// --directory lists a directory whole when it holds no tracked file, and
// the ignored files of the others one by one.
func (t *Tracker) noteIgnored(ctx context.Context, dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	listed, err := listIgnored(ctx, t.dir, dirs...)
	if err != nil {
		return err
	}
	maps.Copy(t.ignored, listed)
	return nil
}

// lateIgnored asks, in the background, which of the directories
// walkLevels put off git ignores; the function it returns waits for the
// answer and notes it as noteIgnored does, the directories not ignored
// as blind, and is to be called from the Tracker's goroutine.
func (t *Tracker) lateIgnored(ctx context.Context, dirs []string) func() error {
	if len(dirs) == 0 {
		return func() error { return nil }
	}
	var listed map[string]bool
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		listed, err = listIgnored(ctx, t.dir, dirs...)
	}()
	return func() error {
		<-done
		if err != nil {
			return err
		}
		maps.Copy(t.ignored, listed)
		for _, d := range dirs {
			if !listed[d] {
				t.blind[d] = true // git does not ignore it; skip does
			}
		}
		return nil
	}
}

// dropIgnored returns rels less the files git ignores (git check-ignore,
// which never names a tracked file), noting those. Files in a nested
// repository are not asked about (git refuses paths in a submodule).
func (t *Tracker) dropIgnored(ctx context.Context, rels []string) ([]string, error) {
	var asked []string
	for _, rel := range rels {
		if !t.inRepo(rel) {
			asked = append(asked, rel)
		}
	}
	if len(asked) == 0 {
		return rels, nil
	}
	ign, err := checkIgnored(ctx, t.dir, asked)
	if err != nil || len(ign) == 0 {
		return rels, err
	}
	for p := range ign {
		t.ignored[p] = true
	}
	return slices.DeleteFunc(rels, func(rel string) bool { return ign[rel] }), nil
}

// readDir is os.ReadDir less the sorting, which the walk does not need:
// at 100,000 files the sort was a quarter of reading the directories.
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// entries describes the files at rels (entry), several at a time: at
// 100,000 files the stat calls are most of a walk.
func (t *Tracker) entries(ctx context.Context, rels []string) ([]treeEntry, error) {
	all := make([]treeEntry, len(rels))
	found := make([]bool, len(rels))
	workers := min(runtime.GOMAXPROCS(0), 8)
	chunk := (len(rels) + workers - 1) / max(workers, 1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(rels))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if i%1024 == 0 && ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				var err error
				if all[i], found[i], err = t.entry(rels[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := all[:0]
	for i := range all {
		if found[i] {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// entry describes the file at rel as it is now; ok is false when there is
// none or it is not content (a directory, socket, device or pipe). The
// digest of a regular file is left for TreeHasher.digest or digestFiles.
func (t *Tracker) entry(rel string) (e treeEntry, ok bool, err error) {
	abs := filepath.Join(t.dir, filepath.FromSlash(rel))
	info, err := os.Lstat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return e, false, nil
		}
		return e, false, err
	}
	e = treeEntry{rel: rel, abs: abs, info: info}
	switch m := info.Mode(); {
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return e, false, nil
			}
			return e, false, err
		}
		e.kind, e.digest = 'l', blobID([]byte(target))
	case m.IsRegular():
		e.kind = 'f'
		if m&0o100 != 0 { // git's executable: the owner's bit
			e.kind = 'x'
		}
	default:
		return e, false, nil
	}
	return e, true, nil
}

// put adds or replaces a file's share of the sum.
func (t *Tracker) put(e treeEntry) {
	// One buffer for every file: at 100,000 files, a hash.Hash each was
	// half of taking them from an index.
	t.shareBuf = append(append(append(t.shareBuf[:0], e.rel...), 0, e.kind, 0), e.digest[:]...)
	share := sha256.Sum256(t.shareBuf)
	if old, ok := t.files[e.rel]; ok {
		if old == share {
			return
		}
		t.sum.sub(old)
	}
	t.files[e.rel] = share
	t.sum.add(share)
}

// remove takes rel and everything under it out of the sum and the watch.
func (t *Tracker) remove(rel string) {
	if share, ok := t.files[rel]; ok {
		t.sum.sub(share)
		delete(t.files, rel)
	}
	if !t.w.watching(rel) {
		return
	}
	prefix := rel + "/"
	for p, share := range t.files {
		if strings.HasPrefix(p, prefix) {
			t.sum.sub(share)
			delete(t.files, p)
		}
	}
	t.w.removeTree(rel)
}

// apply brings the sum up to date with the paths the kernel reported
// changed. Every removal comes before any addition, so that a directory
// renamed within the tree is unwatched under its old name before it is
// watched under the new one.
func (t *Tracker) apply(ctx context.Context, changed map[string]bool) error {
	var files, newFiles, newDirs []string
	var entries []treeEntry
	for _, p := range slices.Sorted(maps.Keys(changed)) {
		if t.excluded(p) {
			continue
		}
		info, err := os.Lstat(filepath.Join(t.dir, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		_, known := t.files[p]
		switch {
		case err != nil:
			t.remove(p)
		case info.IsDir():
			t.remove(p) // rescanned whole: a directory event is a create, a move or a chmod
			newDirs = append(newDirs, p)
		case known:
			files = append(files, p)
		default:
			t.remove(p) // a directory that became a file
			newFiles = append(newFiles, p)
		}
	}
	if len(newFiles)+len(newDirs) > 0 {
		if err := t.learnIgnored(ctx, newFiles, newDirs); err != nil {
			return err
		}
	}
	for _, p := range append(files, newFiles...) {
		if t.ignored[p] {
			continue
		}
		e, ok, err := t.entry(p)
		if err != nil {
			return err
		}
		if !ok {
			t.remove(p)
			continue
		}
		entries = append(entries, e)
	}
	// Read every reported file: its size and time may not have changed.
	var reads []*treeEntry
	for i := range entries {
		if entries[i].kind != 'l' {
			reads = append(reads, &entries[i])
		}
	}
	if err := digestFiles(ctx, reads); err != nil {
		return err
	}
	for _, e := range entries {
		if e.gone {
			t.remove(e.rel)
		} else {
			t.put(e)
		}
	}
	var dirs []string
	for _, d := range newDirs {
		if !t.ignored[d] {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) > 0 {
		return t.scan(ctx, dirs)
	}
	return nil
}

// learnIgnored asks git which of the new files are ignored, and what in
// and under the new directories is.
func (t *Tracker) learnIgnored(ctx context.Context, files, dirs []string) error {
	// Git's rules stop at a nested repository, and it refuses paths in a
	// submodule.
	files = slices.DeleteFunc(slices.Clone(files), t.inRepo)
	dirs = slices.DeleteFunc(slices.Clone(dirs), t.inRepo)
	if len(files) > 0 {
		ign, err := checkIgnored(ctx, t.dir, files)
		if err != nil {
			return err
		}
		for p := range ign {
			t.ignored[p] = true
		}
	}
	if len(dirs) > 0 {
		ign, err := ignoredPaths(ctx, t.dir, dirs...)
		if err != nil {
			return err
		}
		for p := range ign {
			t.ignored[p] = true
		}
	}
	return nil
}

// sum256 is a 256-bit sum modulo 2^256 of the files' shares: adding and
// taking away one file costs the same whatever the number of files.
type sum256 [4]uint64

func (s *sum256) add(b [32]byte) {
	var c uint64
	for i := range s {
		s[i], c = bits.Add64(s[i], binary.LittleEndian.Uint64(b[8*i:]), c)
	}
}

func (s *sum256) sub(b [32]byte) {
	var c uint64
	for i := range s {
		s[i], c = bits.Sub64(s[i], binary.LittleEndian.Uint64(b[8*i:]), c)
	}
}

// String returns the sum in hexadecimal.
func (s sum256) String() string {
	var b [32]byte
	for i, v := range s {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return hex.EncodeToString(b[:])
}

package snapshot

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/filestamp"
	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/gitindex"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// gitConfig sets up the private index the same whatever the user's
// configuration says: split (the entries of the whole tree in a shared
// index file, .git/sharedindex.<id>, rewritten only once a fifth of them
// changed, and each save writing only the few entries it changed: at
// 100,000 files that is kilobytes instead of megabytes per iteration;
// git keeps the shared file fresh while ralph reads it, and stage
// rebuilds the index should the user's git remove it), with an untracked
// cache for git status.
var gitConfig = []string{"-c", "core.splitIndex=true", "-c", "core.untrackedCache=true", "-c", "advice.addEmbeddedRepo=false", "-c", "advice.addIgnoredFile=false"}

// repoLocks serialises writes to one repository across every Repo value in
// the process; git's lock files serialise them across processes.
var repoLocks sync.Map // git dir → *sync.Mutex

// Repo is the snapshot store of one git working tree. Its methods are safe
// for concurrent use.
type Repo struct {
	top    string // working tree root
	gitDir string // absolute git directory of this working tree
	common string // the repository's common git directory (gitDir but in a linked worktree)
	index  string // private index file
	// holders records who may be writing the private index.
	holders *indexHolders
	env     []string
	logger  *slog.Logger
	mu      *sync.Mutex
	now     func() time.Time

	// tipCache is TipRef after this Repo's last save (guarded by mu).
	tipCache string
	tipKnown bool
	// iter is what SaveIteration keeps between calls (guarded by mu).
	iter iterationState
	// indexTree is the tree this Repo last wrote the private index as,
	// "" once anything staged since (guarded by mu): Changes counted
	// from it (Changes.Since) need only their own paths staged.
	indexTree string
	// lastTree is the tree this Repo last returned as the working
	// tree's, written from the private index (indexTree) or built from
	// the changed paths on the one before (buildTree); "" once anything
	// staged since (guarded by mu). Changes.Since must be it.
	lastTree string
	// unstaged are the files the last whole read left unstaged
	// (currentTree; guarded by mu).
	unstaged []string
	// trees and config are what buildTree keeps (guarded by mu);
	// config.files, the state of the configuration files when the
	// long-running gits started and config was read (freshConfig).
	trees  treeCache
	config struct {
		read, plain, shared bool
		files               []filestamp.Stamp
	}
	// hasher is buildTree's long-running hash-object (guarded by mu;
	// nil until the first use, and after an error or the task's end).
	hasher *git.Batch
	// commits writes the iterations' chain in the background.
	commits iterationCommits
	// pendingTrees writes buildTree's trees, as loose objects or through
	// a long-running mktree, in the background (or at once, after a write
	// failed).
	pendingTrees pendingTrees
}

// Open returns the snapshot store of the git working tree that contains dir.
// It fails with ErrNotGitRepo when dir is not inside a working tree (a bare
// repository or a .git directory has none). A nil logger discards logs.
func Open(ctx context.Context, dir string, logger *slog.Logger) (*Repo, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	out, err := runGit(ctx, abs, git.Options{}, nil, "rev-parse", "--absolute-git-dir", "--show-toplevel")
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "not a git repository") || strings.Contains(ge.Stderr, "must be run in a work tree")) {
			return nil, fmt.Errorf("open snapshots in %s: %w", abs, ErrNotGitRepo)
		}
		return nil, fmt.Errorf("open snapshots in %s: %w", abs, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 || lines[1] == "" {
		return nil, fmt.Errorf("open snapshots in %s: %w", abs, ErrNotGitRepo)
	}
	gitDir, top := lines[0], lines[1]
	index := filepath.Join(gitDir, "ralph", "index")
	// The private index is ralph's: git status may write it back with
	// fresh stat data (a stale lock on it is removed, see indexHolders).
	env := append([]string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + top, "GIT_INDEX_FILE=" + index, "GIT_OPTIONAL_LOCKS=1"}, git.Identity...)
	mu, _ := repoLocks.LoadOrStore(gitDir, new(sync.Mutex))
	logger = logger.With("component", "snapshot")
	return &Repo{
		top:     top,
		gitDir:  gitDir,
		common:  commonDir(gitDir),
		index:   index,
		holders: newIndexHolders(index, commonDir(gitDir), logger),
		env:     env,
		logger:  logger,
		mu:      mu.(*sync.Mutex),
		now:     time.Now,
	}, nil
}

// IndexFile returns the private index that Save brings up to date with
// the working tree, and the git directory that holds its shared part
// (the index is split). Once Save returns, each of its entries at stage
// 0 stands for its file as that Save found it, but for ralph's private
// files (workspace.IsPrivate), which it never stages, and the files it
// left unstaged (Unstaged), which a reader must examine itself.
func (r *Repo) IndexFile() (path, gitDir string) { return r.index, r.gitDir }

// Root returns the root of the working tree the snapshots are taken of.
func (r *Repo) Root() string { return r.top }

// git runs a git subcommand against the repository and the private index.
// extraEnv entries override r.env.
func (r *Repo) git(ctx context.Context, stdin []byte, extraEnv []string, args ...string) ([]byte, error) {
	r.pendingTrees.wait(r) // it may read them
	env := r.env
	if len(extraEnv) > 0 {
		env = append(slices.Clip(r.env), extraEnv...)
	}
	full := append(slices.Clip(gitConfig), args...)
	start := time.Now()
	out, err := runGit(ctx, r.top, git.Options{Env: env, Stdin: stdin}, r.holders, full...)
	r.logger.Debug("git", "args", args, "elapsed", time.Since(start), "err", err)
	return out, err
}

// Save snapshots the whole working tree under name, with message as the
// commit message (a default when empty). Names must be ValidName. A manual
// or rollback name that is taken gets the first free suffix ("-2", "-3"…);
// the returned Snapshot carries the name used. A taken task or stall name
// is ErrSnapshotExists.
func (r *Repo) Save(ctx context.Context, name, message string) (Snapshot, error) {
	if !ValidName(name) {
		return Snapshot{}, fmt.Errorf("save %q: %w (names are %s)", name, ErrInvalidName, NameForms)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.save(ctx, name, message)
	if err != nil {
		return Snapshot{}, fmt.Errorf("save %s: %w", name, err)
	}
	return s, nil
}

// SaveChanged is Save for a caller that watched the working tree: when
// ch is known from ch.Since (Changes), only its paths are read.
func (r *Repo) SaveChanged(ctx context.Context, name, message string, ch Changes) (Snapshot, error) {
	if !ValidName(name) {
		return Snapshot{}, fmt.Errorf("save %q: %w (names are %s)", name, ErrInvalidName, NameForms)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, _, err := r.treeWith(ctx, ch, ch.Since)
	if err == nil {
		var s Snapshot
		if s, err = r.saveTree(ctx, name, message, tree); err == nil {
			return s, nil
		}
	}
	return Snapshot{}, fmt.Errorf("save %s: %w", name, err)
}

func (r *Repo) save(ctx context.Context, name, message string) (Snapshot, error) {
	tree, err := r.currentTree(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return r.saveTree(ctx, name, message, tree)
}

// saveTree commits tree as the snapshot called name.
func (r *Repo) saveTree(ctx context.Context, name, message, tree string) (Snapshot, error) {
	start := time.Now()
	kind, task, _ := ParseName(name)
	now := r.now()
	msg := cleanMessage(message)
	parent := r.currentTip(ctx)
	checkTip := true
	for i, moved := 1, 0; ; {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s-%d", name, i)
		}
		commit, err := r.commitTree(ctx, tree, parent, n, msg, now)
		if err != nil {
			return Snapshot{}, err
		}
		expect := ""
		if checkTip {
			expect = parent
			if expect == "" {
				expect = strings.Repeat("0", len(commit)) // the tip must not exist yet
			}
		}
		err = r.createRef(ctx, n, commit, expect)
		switch {
		case err == nil:
			r.tipCache, r.tipKnown = commit, true
			s := Snapshot{Name: n, Commit: commit, Tree: tree, Kind: kind, Task: task, Message: msg, Time: now}
			r.logger.Debug("saved snapshot", "name", n, "commit", commit, "elapsed", time.Since(start))
			r.packRefsIfMany(ctx)
			return s, nil
		case errors.Is(err, errTipMoved):
			// Another process saved a snapshot since: make it the parent.
			// After a few tries, stop insisting on an unbroken chain.
			r.tipKnown = false
			parent = r.currentTip(ctx)
			if moved++; moved >= 3 {
				checkTip = false
			}
			continue
		case !errors.Is(err, errRefExists):
			return Snapshot{}, err
		}
		// Only timestamped names without a suffix are made unique.
		if !uniqueKind(kind) || strings.Count(name, "-") != 1 || i >= 1000 {
			return Snapshot{}, ErrSnapshotExists
		}
		i++
	}
}

// cleanMessage drops control characters other than newline and tab, so the
// message cannot break the record separators List reads.
func cleanMessage(m string) string {
	m = strings.Map(func(c rune) rune {
		if c < 0x20 && c != '\n' && c != '\t' {
			return -1
		}
		return c
	}, m)
	return strings.TrimSpace(m)
}

// maxLooseRefs is how many snapshot refs may be loose files before
// packRefsIfMany packs them: the history check stats each one twice an
// iteration (about 5 µs a file), and packing them costs one git process
// every four tasks.
const maxLooseRefs = 8

// packRefsIfMany packs the repository's refs (`git pack-refs --all`, as
// git's own gc does) once more than maxLooseRefs snapshot refs are loose
// files. Every agent run's history check stats each loose ref (internal/
// guard); packed, a hundred tasks' snapshots are one file to stat, not
// two hundred. The refs keep their values: only how git stores them
// changes. A failure leaves them loose, as they were.
func (r *Repo) packRefsIfMany(ctx context.Context) {
	entries, err := os.ReadDir(filepath.Join(r.common, filepath.FromSlash(strings.TrimSuffix(RefPrefix, "/"))))
	if err != nil || len(entries) <= maxLooseRefs {
		return
	}
	if _, err := r.git(ctx, nil, nil, "pack-refs", "--all"); err != nil {
		r.logger.Warn("pack the snapshot refs", "err", err)
	}
}

// commonDir returns the common git directory of the working tree whose
// git directory is gitDir: the one its commondir file names in a linked
// worktree, gitDir itself otherwise.
func commonDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if filepath.IsAbs(c) {
		return c
	}
	return filepath.Join(gitDir, c)
}

// errRefExists marks a createRef that found the name taken; errTipMoved
// one that found the tip elsewhere than expected.
var (
	errRefExists = errors.New("ref exists")
	errTipMoved  = errors.New("tip moved")
)

// createRef points the snapshot ref and the tip at commit in one
// transaction. expect, when not empty, is the tip's expected value (all
// zeros: no tip yet). It fails with errRefExists when the name is taken and
// errTipMoved when the tip is not at expect.
func (r *Repo) createRef(ctx context.Context, name, commit, expect string) error {
	in := fmt.Sprintf("create %s%s %s\nupdate %s %s %s\n", RefPrefix, name, commit, TipRef, commit, expect)
	_, err := r.git(ctx, []byte(in), nil, "update-ref", "-m", "ralph snapshot "+name, "--stdin")
	var ge *git.Error
	switch {
	case !errors.As(err, &ge):
		return err
	case strings.Contains(ge.Stderr, "'"+TipRef+"'"):
		return errTipMoved
	case strings.Contains(ge.Stderr, "reference already exists"):
		return errRefExists
	}
	return err
}

// currentTip returns the newest snapshot commit, "" when there is none. It
// asks git only when the value is not known from this Repo's last save;
// createRef checks the value, so a stale one is caught.
func (r *Repo) currentTip(ctx context.Context) string {
	if r.tipKnown {
		return r.tipCache
	}
	out, err := r.git(ctx, nil, nil, "rev-parse", "-q", "--verify", TipRef+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

const (
	trailerName = "Ralph-Snapshot: "
	trailerTime = "Ralph-Time: "
)

func (r *Repo) commitTree(ctx context.Context, tree, parent, name, msg string, now time.Time) (string, error) {
	subject := msg
	if subject == "" {
		subject = "ralph snapshot " + name
	}
	full := fmt.Sprintf("%s\n\n%s%s\n%s%s\n", subject, trailerName, name, trailerTime, now.UTC().Format(time.RFC3339Nano))
	date := fmt.Sprintf("%d +0000", now.Unix())
	args := []string{"commit-tree", "--no-gpg-sign", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	args = append(args, "-F", "-")
	out, err := r.git(ctx, []byte(full), []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// stage brings the private index up to date with the working tree, leaving
// out ralph's private files. The first time, the index is seeded from the
// user's (or HEAD: seed) so that tracked files a .gitignore pattern
// matches are kept, as git keeps them.
func (r *Repo) stage(ctx context.Context) error {
	r.indexTree, r.lastTree = "", ""
	files, simple, err := r.changedSinceIndex(ctx)
	if err != nil {
		return err
	}
	return r.stageChanged(ctx, files, simple)
}

// changedSinceIndex seeds the private index when there is none and
// returns what changedPaths says differs from it, seeding it again when
// the user's git removed its shared part.
func (r *Repo) changedSinceIndex(ctx context.Context) (files []string, simple bool, err error) {
	if _, err := os.Stat(r.index); errors.Is(err, fs.ErrNotExist) {
		if err := r.seed(ctx); err != nil {
			return nil, false, fmt.Errorf("seed private index: %w", err)
		}
	}
	files, simple, err = r.changedPaths(ctx)
	if err != nil && lostSharedIndex(err) {
		// The private index is derived (HEAD, then the working tree):
		// when the user's git removed the shared part of it (its cleanup
		// of old sharedindex files), build it again.
		r.logger.Warn("rebuilding the private snapshot index: its shared part is gone", "err", err)
		if err := os.Remove(r.index); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
		if err := r.seed(ctx); err != nil {
			return nil, false, fmt.Errorf("seed private index: %w", err)
		}
		files, simple, err = r.changedPaths(ctx)
	}
	return files, simple, err
}

// stageChanged brings the private index up to date with the working
// tree, given what changedSinceIndex found: files staged one by one when
// simple, else git add -A of the whole tree.
func (r *Repo) stageChanged(ctx context.Context, files []string, simple bool) error {
	r.unstaged = nil
	if !simple {
		// Something went or a directory came: let git add -A sort out
		// what replaced what.
		args := append([]string{"add", "-A", "--", "."}, excludes...)
		if _, err := r.git(ctx, nil, nil, args...); err != nil && !onlyPrivateIgnored(err) {
			return err
		}
		return nil
	}
	if len(files) > 0 {
		// Exactly these paths, rehashed or added.
		list := []byte(strings.Join(files, "\x00") + "\x00")
		if _, err := r.git(ctx, list, nil, "update-index", "--add", "--replace", "-z", "--stdin"); err != nil {
			return err
		}
	}
	return nil
}

// changedPaths asks git status which files of the working tree differ
// from the private index: files tracked there that changed in content or
// mode, and untracked files that are not ignored. simple is false when that
// is not the whole story — a tracked file went, or an untracked directory
// came (git status names the directory, not its files) — and git add -A
// must work it out. git status reads the working tree as git add -A does,
// but with the index's untracked cache it rereads only the directories
// that changed (git's fsmonitor is off for ralph: internal/git). ralph's
// private files are left out.
func (r *Repo) changedPaths(ctx context.Context) (files []string, simple bool, err error) {
	out, err := r.git(ctx, nil, nil, "status", "--porcelain=v2", "-z", "--untracked-files=normal", "--no-renames", "--ignore-submodules=none")
	if err != nil {
		return nil, false, err
	}
	for rec := range strings.SplitSeq(string(out), "\x00") {
		var p string
		switch {
		case rec == "":
			continue
		case strings.HasPrefix(rec, "? "):
			p = rec[2:]
			if strings.HasSuffix(p, "/") {
				if workspace.IsPrivate(strings.TrimSuffix(p, "/")) {
					continue
				}
				return nil, false, nil
			}
		case strings.HasPrefix(rec, "1 "):
			// "1 XY sub mH mI mW hH hI path": Y is the working tree's
			// state against the index.
			f := strings.SplitN(rec, " ", 9)
			if len(f) != 9 || len(f[1]) != 2 {
				return nil, false, fmt.Errorf("git status: unexpected record %q", rec)
			}
			switch f[1][1] {
			case '.':
				continue // differs from HEAD only: the index has it
			case 'M', 'T':
				p = f[8]
			default:
				return nil, false, nil
			}
			if f[2] != "N..." {
				return nil, false, nil // a submodule
			}
		default:
			return nil, false, nil // unmerged, or something new
		}
		if !workspace.IsPrivate(p) {
			files = append(files, p)
		}
	}
	return files, true, nil
}

// lostSharedIndex reports whether git failed because the shared part of
// the split private index (a sharedindex file in the git directory) is
// gone.
func lostSharedIndex(err error) bool {
	var ge *git.Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "sharedindex.")
}

// excludes are ralph's private files (workspace.Private) as exclude
// pathspecs: git add never reads, hashes or stores them, whether or not a
// .gitignore lists them.
var excludes = func() []string {
	var ex []string
	for _, p := range workspace.PrivatePaths() {
		ex = append(ex, ":(exclude)"+p)
	}
	return ex
}()

// onlyPrivateIgnored reports whether a failed git add failed only because
// an exclude pathspec named files a .gitignore also ignores (git lists them
// and exits 1, after writing the index). Any other complaint is an error.
func onlyPrivateIgnored(err error) bool {
	var ge *git.Error
	if !errors.As(err, &ge) || ge.ExitCode() != 1 {
		return false
	}
	listed := false
	for line := range strings.SplitSeq(ge.Stderr, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "hint:") || strings.HasPrefix(line, "warning:"):
		case strings.HasPrefix(line, "The following paths are ignored"):
			listed = true
		case listed && (workspace.IsPrivate(line) || line == ".ralph"):
		default:
			return false
		}
	}
	return listed
}

// seed makes the private index from the user's, when that is whole and
// plain (gitindex.Index.Plain: not split, not sparse, no conflict, no
// entry git is told to skip), so that it starts with the stat data git
// recorded and the first stage rehashes only what changed since, as git
// add -A would; else from HEAD's tree, which has no stat data, so the
// first stage reads every file. The copy keeps the user's file time, so
// git's racy check sees the entries as the user's git would. ralph's
// private files are taken out either way. The user's index is only read.
func (r *Repo) seed(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(r.index), 0o755); err != nil {
		return err
	}
	out, err := r.git(ctx, nil, nil, "rev-parse", "-q", "--verify", "HEAD^{tree}")
	if err != nil {
		return nil // no commits yet: git add builds the index from nothing
	}
	head := strings.TrimSpace(string(out))
	tmp := r.index + ".seed"
	env := []string{"GIT_INDEX_FILE=" + tmp}
	_ = os.Remove(tmp)
	r.holders.removeSeedLock(tmp + ".lock")
	if !r.copyUserIndex(tmp) {
		if _, err := r.git(ctx, nil, env, "read-tree", head); err != nil {
			return err
		}
	}
	args := append([]string{"rm", "-r", "-q", "-f", "--cached", "--ignore-unmatch", "--"}, workspace.PrivatePaths()...)
	if _, err := r.git(ctx, nil, env, args...); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, r.index)
}

// copyUserIndex copies the user's index to path, with its modification
// time, when it is whole and plain; it reports whether it did.
func (r *Repo) copyUserIndex(path string) bool {
	user := filepath.Join(r.gitDir, "index")
	fi, err := os.Stat(user)
	if err != nil {
		return false
	}
	data, err := os.ReadFile(user)
	if err != nil {
		return false
	}
	ix, err := gitindex.Parse(data)
	if err != nil || !ix.Plain() {
		r.logger.Debug("seeding the private index from HEAD", "user index", user, "err", err)
		return false
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return false
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		_ = os.Remove(path)
		return false
	}
	return true
}

// maxUnstaged and maxUnstagedBytes bound the files a whole read leaves
// unstaged (Unstaged): git status reads each one whose size did not
// change again on every read until they are staged.
const (
	maxUnstaged      = 64
	maxUnstagedBytes = 8 << 20
)

// currentTree reads the whole working tree and returns its tree id. git
// status says which files differ from the private index. When those are a
// few files (none gone, no new directory: changedPaths' simple) and the
// index knows the tree it was last written as (its cache tree), the tree
// is that one with those files brought up to date (buildTree) and the
// index is left as it was: each git would otherwise read and write the
// whole index (at 100,000 files, update-index and write-tree took 70 ms of
// a task's start). The files stay unstaged (Unstaged) until a read finds
// more than maxUnstaged, or more than maxUnstagedBytes in them, or
// something only git add -A sorts out.
//
// It ends buildTree's long-running gits first: what changed is not known,
// and may be a .gitattributes, which a running hash-object would not read
// again.
func (r *Repo) currentTree(ctx context.Context) (string, error) {
	r.closeBatches()
	r.indexTree, r.lastTree = "", ""
	files, simple, err := r.changedSinceIndex(ctx)
	if err != nil {
		return "", err
	}
	notPlain := r.config.read && !r.config.plain // buildTree would refuse: asked already
	if simple && len(files) <= maxUnstaged && r.smallFiles(files) && !notPlain {
		if base := r.treeOfIndex(ctx, len(files) == 0); base != "" {
			tree, err := r.buildTree(ctx, base, files)
			if err == nil {
				r.indexTree, r.lastTree = base, tree
				r.unstaged = slices.Sorted(slices.Values(files))
				r.logger.Debug("built the tree from the index's and the files git status named", "files", len(files))
				return tree, nil
			}
			r.closeBatches()
			if !errors.Is(err, errNotPlain) {
				r.forgetConfig()
			}
			r.logger.Debug("building the tree from the files git status named failed; staging them", "err", err)
		}
	}
	if err := r.stageChanged(ctx, files, simple); err != nil {
		return "", err
	}
	return r.writeTree(ctx)
}

// smallFiles reports whether the files (slash-separated, relative to
// the root) hold maxUnstagedBytes at most between them.
func (r *Repo) smallFiles(files []string) bool {
	var n int64
	for _, f := range files {
		if fi, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(f))); err == nil {
			n += fi.Size()
		}
	}
	return n <= maxUnstagedBytes
}

// stagedTree stages the whole working tree into the private index and
// returns its tree id: the index then matches the working tree exactly.
func (r *Repo) stagedTree(ctx context.Context) (string, error) {
	r.closeBatches()
	if err := r.stage(ctx); err != nil {
		return "", err
	}
	return r.writeTree(ctx)
}

// treeOfIndex returns the tree the private index was last written as,
// when git kept that (its cache tree), the index is split, so that
// reading it reads only the small part, and, when check is set, the
// repository has the tree: as git write-tree does, a tree git lost is
// not taken (nothing reaches the tree of an index ralph never committed,
// and git gc prunes it). Unchecked, buildTree finds out as it reads the
// tree. Else "".
func (r *Repo) treeOfIndex(ctx context.Context, check bool) string {
	f, err := gitindex.Read(r.index)
	if err != nil || !f.Split || !f.TreeKnown {
		return ""
	}
	id := hex.EncodeToString(f.Tree[:])
	if !check {
		return id
	}
	// A loose object is there to see; one in a pack, git is asked about.
	if _, err := os.Stat(filepath.Join(r.common, "objects", id[:2], id[2:])); err == nil {
		return id
	}
	if _, err := r.git(ctx, nil, nil, "cat-file", "-e", id+"^{tree}"); err != nil {
		return ""
	}
	return id
}

// Unstaged returns the paths the last whole read of the working tree
// (Save, and every read not from changed paths) built into its tree
// without staging them: their entries in the private index (IndexFile)
// are not the files as it read them. The rest of the index's entries
// are. nil when there are none.
func (r *Repo) Unstaged() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.unstaged)
}

// writeTree writes the private index as a tree and returns its id.
func (r *Repo) writeTree(ctx context.Context) (string, error) {
	out, err := r.git(ctx, nil, nil, "write-tree")
	if err != nil {
		return "", err
	}
	r.indexTree = strings.TrimSpace(string(out))
	r.lastTree = r.indexTree
	return r.indexTree, nil
}

// List returns every snapshot, oldest first.
func (r *Repo) List(ctx context.Context) ([]Snapshot, error) {
	ss, err := r.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	return ss, nil
}

func (r *Repo) list(ctx context.Context) ([]Snapshot, error) {
	return r.listRefs(ctx, RefPrefix)
}

// listRefs returns the snapshots whose refs for-each-ref's pattern
// matches, oldest first.
func (r *Repo) listRefs(ctx context.Context, pattern string) ([]Snapshot, error) {
	const format = "--format=%(refname)%1f%(objectname)%1f%(tree)%1f%(creatordate:unix)%1f%(contents)%1e"
	out, err := r.git(ctx, nil, nil, "for-each-ref", format, pattern)
	if err != nil {
		return nil, err
	}
	var ss []Snapshot
	for rec := range strings.SplitSeq(string(out), "\x1e\n") {
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, "\x1f", 5)
		if len(f) != 5 {
			continue
		}
		name, ok := strings.CutPrefix(f[0], RefPrefix)
		kind, task, valid := ParseName(name)
		if !ok || !valid || f[2] == "" {
			r.logger.Debug("ignoring ref in the snapshot namespace", "ref", f[0])
			continue
		}
		s := Snapshot{Name: name, Commit: f[1], Tree: f[2], Kind: kind, Task: task}
		if sec, err := strconv.ParseInt(f[3], 10, 64); err == nil {
			s.Time = time.Unix(sec, 0)
		}
		s.Message, s.Time = parseMessage(f[4], name, s.Time)
		ss = append(ss, s)
	}
	slices.SortStableFunc(ss, func(a, b Snapshot) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return ss, nil
}

// parseMessage splits a snapshot commit message into the message given to
// Save and the precise time from its trailer (fallback t).
func parseMessage(contents, name string, t time.Time) (string, time.Time) {
	i := strings.LastIndex(contents, "\n\n"+trailerName)
	if i < 0 {
		return strings.TrimSpace(contents), t
	}
	msg := strings.TrimSpace(contents[:i])
	if msg == "ralph snapshot "+name {
		msg = ""
	}
	for line := range strings.SplitSeq(contents[i+2:], "\n") {
		if v, ok := strings.CutPrefix(line, trailerTime); ok {
			if pt, err := time.Parse(time.RFC3339Nano, v); err == nil {
				t = pt
			}
		}
	}
	return msg, t
}

// Resolve returns the snapshot called name, or an *UnknownSnapshotError
// (errors.Is ErrNoSuchSnapshot) listing the valid names.
func (r *Repo) Resolve(ctx context.Context, name string) (Snapshot, error) {
	s, err := r.resolve(ctx, name)
	if err != nil {
		return Snapshot{}, fmt.Errorf("resolve snapshot: %w", err)
	}
	return s, nil
}

func (r *Repo) resolve(ctx context.Context, name string) (Snapshot, error) {
	if ValidName(name) {
		// Its own ref only: reading every snapshot's commit took tens
		// of milliseconds once there were hundreds.
		ss, err := r.listRefs(ctx, RefPrefix+name)
		if err != nil {
			return Snapshot{}, err
		}
		for _, s := range ss {
			if s.Name == name {
				return s, nil
			}
		}
	}
	ss, err := r.list(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return Snapshot{}, &UnknownSnapshotError{Name: name, Malformed: !ValidName(name), Valid: names}
}

// Exists reports whether a snapshot called name exists.
func (r *Repo) Exists(ctx context.Context, name string) (bool, error) {
	if !ValidName(name) {
		return false, nil
	}
	out, err := r.git(ctx, nil, nil, "for-each-ref", "--format=%(objectname)", RefPrefix+name)
	if err != nil {
		return false, fmt.Errorf("look up snapshot %s: %w", name, err)
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// Rollback makes the working tree exactly the snapshot called name: files
// that differ are rewritten, files added since are removed, ignored files
// and ralph's private files are left alone. It first saves the current tree
// as a rollback-<unix> snapshot and returns it, so that rolling back to it
// undoes the rollback; where the snapshot needs the place of ignored files
// (a directory of them where it has a file, say), those files are saved in
// that rollback snapshot too. If the save fails nothing is touched. An
// unknown or malformed name is an *UnknownSnapshotError.
func (r *Repo) Rollback(ctx context.Context, name string) (undo Snapshot, err error) {
	start := time.Now()
	// Look the target up while the working tree is staged: neither needs
	// the other, and the staging touches nothing but the private index.
	type found struct {
		s   Snapshot
		err error
	}
	lookup := make(chan found, 1)
	go func() {
		s, err := r.resolve(ctx, name)
		lookup <- found{s, err}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	// The index ends as the target's tree, or wherever a failure left it.
	defer func() { r.indexTree, r.lastTree = "", "" }()
	tree, stageErr := r.stagedTree(ctx)
	f := <-lookup
	if f.err != nil {
		return Snapshot{}, fmt.Errorf("rollback: %w", f.err)
	}
	target := f.s
	if stageErr == nil {
		undo, err = r.saveBeforeRollback(ctx, target, tree)
	} else {
		err = stageErr
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("rollback to %s: save the current state first: %w", name, err)
	}
	if undo.Tree != target.Tree {
		// The private index now matches the working tree and the undo
		// tree exactly, so a two-way merge from that tree to the target,
		// as git checkout does, reads and writes only the paths the two
		// trees differ in (a one-way --reset merge would stat every file).
		if _, err := r.git(ctx, nil, nil, "read-tree", "-m", "-u", undo.Tree, target.Tree); err != nil {
			return undo, fmt.Errorf("rollback to %s (the previous state is saved as %s): %w", name, undo.Name, err)
		}
	}
	r.logger.Info("rolled back", "to", name, "undo", undo.Name, "elapsed", time.Since(start))
	return undo, nil
}

// saveBeforeRollback saves the working tree, staged as tree, as
// rollback-<unix>. Restoring
// target may need the place of an ignored file: a file where the target has
// a directory, or a file or directory where the target has a file. Those
// ignored files go into this snapshot too (they are not otherwise saved), so
// undoing the rollback brings them back. ralph's private files are never
// saved; a rollback that would replace one is refused.
func (r *Repo) saveBeforeRollback(ctx context.Context, target Snapshot, tree string) (Snapshot, error) {
	inTheWay, err := r.filesInTheWay(ctx, tree, target.Tree)
	if err != nil {
		return Snapshot{}, err
	}
	if len(inTheWay) > 0 {
		for _, p := range inTheWay {
			if workspace.IsPrivate(p) {
				return Snapshot{}, fmt.Errorf("restoring %s would replace ralph's private file %s", target.Name, p)
			}
		}
		r.logger.Info("saving ignored files the rollback replaces", "files", inTheWay)
		list := []byte(strings.Join(inTheWay, "\x00") + "\x00")
		literal := []string{"GIT_LITERAL_PATHSPECS=1"}
		if _, err := r.git(ctx, list, literal, "add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return Snapshot{}, err
		}
		if tree, err = r.writeTree(ctx); err != nil {
			return Snapshot{}, err
		}
	}
	return r.saveTree(ctx, Rollback(r.now()), "before rollback to "+target.Name, tree)
}

// filesInTheWay lists the working-tree files that restoring to from the
// current tree cur would delete or overwrite although cur does not hold
// them: ignored files at, under or above a path that only to holds.
func (r *Repo) filesInTheWay(ctx context.Context, cur, to string) ([]string, error) {
	out, err := r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--diff-filter=A", cur, to)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var files []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if p == "" {
			continue
		}
		// A file or symlink where the target needs a directory.
		for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
			if fi, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(p[:i]))); err == nil && !fi.IsDir() {
				add(p[:i])
			}
		}
		full := filepath.Join(r.top, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		switch {
		case err != nil:
			continue
		case !fi.IsDir():
			add(p) // a file the target overwrites
		default: // a directory where the target has a file
			err := filepath.WalkDir(full, func(q string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					rel, _ := filepath.Rel(r.top, q)
					add(filepath.ToSlash(rel))
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// Diff lists the files that differ between the snapshot called name and the
// working tree, sorted by path.
func (r *Repo) Diff(ctx context.Context, name string) ([]FileChange, error) {
	target, err := r.resolve(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.stage(ctx); err != nil {
		return nil, fmt.Errorf("diff %s: %w", name, err)
	}
	out, err := r.git(ctx, nil, nil, "diff-index", "--cached", "-z", "--name-status", "--no-renames", target.Commit, "--")
	if err != nil {
		return nil, fmt.Errorf("diff %s: %w", name, err)
	}
	return parseNameStatus(out), nil
}

// DiffChanged is Diff for a caller that watched the working tree: when ch
// is known from ch.Since (Changes), only its paths are read. It returns
// the working tree's tree too, for the caller's next Changes.
func (r *Repo) DiffChanged(ctx context.Context, name string, ch Changes) ([]FileChange, string, error) {
	target, err := r.resolve(ctx, name)
	if err != nil {
		return nil, "", fmt.Errorf("diff: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, _, err := r.treeWith(ctx, ch, ch.Since)
	if err != nil {
		return nil, "", fmt.Errorf("diff %s: %w", name, err)
	}
	out, err := r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--name-status", "--no-renames", target.Commit, tree, "--")
	if err != nil {
		return nil, "", fmt.Errorf("diff %s: %w", name, err)
	}
	return parseNameStatus(out), tree, nil
}

// DiffBetween returns the files that differ from snapshot from to
// snapshot to.
func (r *Repo) DiffBetween(ctx context.Context, from, to string) ([]FileChange, error) {
	a, err := r.resolve(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	b, err := r.resolve(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	out, err := r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--name-status", "--no-renames", a.Commit, b.Commit, "--")
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	return parseNameStatus(out), nil
}

// DiffStat is the size of the change between two states of the tree.
type DiffStat struct {
	Files   int `json:"files"`
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
	// Binary counts the changed files git has no line counts for.
	Binary int `json:"binary,omitempty"`
}

// Stat returns the size of the change from snapshot from to snapshot to,
// or to the working tree when to is "".
func (r *Repo) Stat(ctx context.Context, from, to string) (DiffStat, error) {
	a, err := r.resolve(ctx, from)
	if err != nil {
		return DiffStat{}, fmt.Errorf("diff stat: %w", err)
	}
	var out []byte
	if to == "" {
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := r.stage(ctx); err != nil {
			return DiffStat{}, fmt.Errorf("diff stat %s: %w", from, err)
		}
		out, err = r.git(ctx, nil, nil, "diff-index", "--cached", "-z", "--numstat", "--no-renames", a.Commit, "--")
	} else {
		b, rerr := r.resolve(ctx, to)
		if rerr != nil {
			return DiffStat{}, fmt.Errorf("diff stat: %w", rerr)
		}
		out, err = r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--numstat", "--no-renames", a.Commit, b.Commit, "--")
	}
	if err != nil {
		return DiffStat{}, fmt.Errorf("diff stat %s: %w", from, err)
	}
	return parseNumStat(out), nil
}

// parseNumStat reads `--numstat -z` output: "ADDED\tDELETED\tPATH\x00",
// with "-" for a binary file's counts.
func parseNumStat(out []byte) DiffStat {
	var st DiffStat
	for _, rec := range strings.Split(string(out), "\x00") {
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		st.Files++
		a, err1 := strconv.Atoi(f[0])
		d, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			st.Binary++
			continue
		}
		st.Added += a
		st.Deleted += d
	}
	return st
}

// parseNameStatus reads `--name-status -z` output.
func parseNameStatus(out []byte) []FileChange {
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var cs []FileChange
	for i := 0; i+1 < len(f); i += 2 {
		c := Modified
		switch f[i] {
		case "A":
			c = Added
		case "D":
			c = Deleted
		}
		cs = append(cs, FileChange{Path: f[i+1], Change: c})
	}
	slices.SortFunc(cs, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	return cs
}

// Status reports where the working tree stands: the snapshot it equals, if
// any, how many files differ from the newest snapshot, and when that was.
func (r *Repo) Status(ctx context.Context) (Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, err := r.currentTree(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("snapshot status: %w", err)
	}
	ss, err := r.list(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("snapshot status: %w", err)
	}
	st := Status{Count: len(ss)}
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].Tree == tree {
			st.Current = ss[i].Name
			break
		}
	}
	var out []byte
	if len(ss) == 0 {
		out, err = r.git(ctx, nil, nil, "ls-tree", "-r", "-z", "--name-only", tree)
	} else {
		latest := ss[len(ss)-1]
		st.Latest, st.LastTime = latest.Name, latest.Time
		out, err = r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", latest.Tree, tree)
	}
	if err != nil {
		return Status{}, fmt.Errorf("snapshot status: %w", err)
	}
	st.Changes = bytes.Count(out, []byte{0})
	return st, nil
}

// ReadFile returns the content of the file at path (slash-separated,
// relative to the repository root) in the snapshot called name. A path the
// snapshot does not hold is an error matching fs.ErrNotExist.
func (r *Repo) ReadFile(ctx context.Context, name, path string) ([]byte, error) {
	if !fs.ValidPath(path) || path == "." || strings.ContainsAny(path, "\n\x00") {
		return nil, fmt.Errorf("read %q at %s: %w", path, name, fs.ErrInvalid)
	}
	s, err := r.resolve(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out, err := r.git(ctx, []byte(s.Commit+":"+path+"\n"), nil, "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", path, name, err)
	}
	header, body, _ := bytes.Cut(out, []byte("\n"))
	f := strings.Fields(string(header))
	// A missing object's header repeats the name asked for, which may
	// hold spaces: "<commit>:<path> missing".
	if strings.HasSuffix(string(header), " missing") {
		return nil, fmt.Errorf("read %s at %s: %w", path, name, fs.ErrNotExist)
	}
	if len(f) != 3 || f[1] != "blob" {
		return nil, fmt.Errorf("read %s at %s: not a file (%s)", path, name, header)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size > len(body) {
		return nil, fmt.Errorf("read %s at %s: bad cat-file output %q", path, name, header)
	}
	return body[:size], nil
}

// Uncommitted counts the files in which the snapshot s differs from the
// commit checked out (from nothing when there is none) outside .ralph/:
// the user's uncommitted changes and untracked files when s was just
// saved. It compares two trees, reading no working-tree file.
func (r *Repo) Uncommitted(ctx context.Context, s Snapshot) (int, error) {
	head := emptyTree
	if out, err := r.git(ctx, nil, nil, "rev-parse", "-q", "--verify", "HEAD^{tree}"); err == nil {
		head = strings.TrimSpace(string(out))
	}
	out, err := r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", head, s.Tree, "--", ".", ":(exclude)"+workspace.Dir)
	if err != nil {
		return 0, fmt.Errorf("count uncommitted changes: %w", err)
	}
	return bytes.Count(out, []byte{0}), nil
}

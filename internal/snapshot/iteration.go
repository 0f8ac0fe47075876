package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// IterationRefPrefix holds, per task, the chain of its iterations' trees
// (refs/ralph/iterations/task-N): one commit an iteration, so the trees
// the dashboard diffs stay reachable. They are not snapshots: List never
// shows them and nothing rolls back to them.
const IterationRefPrefix = "refs/ralph/iterations/"

// emptyTree is git's empty tree, the state before a first snapshot.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// iterationCommitDelay is how long the chain's commits wait after an
// iteration is recorded, and between two rounds of the worker, so that
// they are written while the next agent runs rather than between two
// agents, and a burst of short iterations moves the chain's ref once.
const iterationCommitDelay = 250 * time.Millisecond

// Changes is what a watcher of the working tree saw change since the
// tree was last read, so that reading it again need not ask git.
type Changes struct {
	// Known is set when Paths is the whole story since Since (or, Since
	// empty, since the previous SaveIteration of the same task and Repo);
	// otherwise the whole working tree is read, as git status does.
	Known bool
	// Paths are the files (slash-separated, relative to the working
	// tree's root) created, changed or removed: never directories, never
	// files git ignores. Known with no Paths means the tree is still the
	// one counted from.
	Paths []string
	// Since, when set, is the tree Paths count from: one this Repo
	// returned (SaveIteration, SaveChanged, DiffChanged, or a Snapshot's
	// Tree) while the watcher watched. It counts only while it is the
	// last tree this Repo returned as the working tree's; after anything
	// else staged, the whole tree is read.
	Since string
}

// iterationState is what SaveIteration keeps between calls (guarded by
// Repo.mu).
type iterationState struct {
	// trees are the trees the chains' last iterations recorded, by ref.
	trees map[string]string
	// stale is set when a save failed: what changed before it is not in
	// the private index, so the next save reads the whole tree.
	stale bool
}

// SaveIteration records the working tree as it is after iteration n of
// task (ralph's private files left out, as in every snapshot) and returns
// its tree id. ch says what changed since the previous call: an unchanged
// tree costs no git at all; known changes, the trees on their paths
// (buildTree: answers of the task's long-running hash-object, whatever
// the size of the tree); unknown ones, a git status of the private index
// and the trees on what it names (or, past a few files, a write-tree). The chain's commit is written in the
// background, in order (FlushIterations waits for it, and ends the
// long-running gits), except iteration 0's, the task's start, written
// before SaveIteration returns.
func (r *Repo) SaveIteration(ctx context.Context, task, n int, ch Changes) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := fmt.Sprintf("%stask-%d", IterationRefPrefix, task)
	if r.iter.trees == nil {
		r.iter.trees = map[string]string{}
	}
	if err := r.pendingTrees.takeErr(); err != nil {
		// An earlier tree may be missing: read this one whole.
		r.logger.Warn("write the iteration's trees", "err", err)
		r.iter.stale = true
	}
	base := r.iter.trees[ref]
	if ch.Since != "" {
		base = ch.Since
	}
	tree, reused, err := r.treeWith(ctx, ch, base)
	if err != nil {
		r.iter.stale = true
		return "", fmt.Errorf("record iteration %d: %w", n, err)
	}
	r.iter.stale = false
	r.iter.trees[ref] = tree
	r.logger.Debug("recorded iteration", "task", task, "iteration", n, "tree", tree, "unchanged", reused, "paths", len(ch.Paths), "known", ch.Known)
	r.commits.add(r, iterationCommit{ref: ref, tree: tree, msg: fmt.Sprintf("task %d iteration %d", task, n), at: r.now()})
	if n == 0 {
		// The task's start, before any agent runs: IterationBase, which
		// the dashboard reads from another process, finds it at once.
		if err := r.commits.flush(); err != nil {
			return tree, fmt.Errorf("record iteration %d: %w", n, err)
		}
	}
	return tree, nil
}

// treeWith returns the working tree's tree as it is now: base with
// ch.Paths brought up to date when ch is known from base (reused: base
// itself, no git at all, when nothing changed), the whole tree read
// otherwise. A base named by ch.Since counts only while it is the last
// tree this Repo returned as the working tree's.
func (r *Repo) treeWith(ctx context.Context, ch Changes, base string) (tree string, reused bool, err error) {
	switch {
	case !ch.Known || r.iter.stale || base == "" || (ch.Since != "" && ch.Since != r.lastTree):
		tree, err = r.currentTree(ctx)
	case len(ch.Paths) == 0:
		tree, reused = base, true
	default:
		tree, err = r.pathsTree(ctx, base, ch.Paths)
	}
	return tree, reused, err
}

// pathsTree returns base with exactly paths brought up to date
// (rehashed, added, or removed when gone): built from the trees on their
// paths (buildTree), leaving the private index as it was; where that
// cannot be done exactly, staged onto the private index when that is
// base, else the whole tree read. Should git refuse one of the paths (a
// directory after all, a path inside a nested repository), the whole
// tree is read too. When buildTree fails its long-running gits end: a
// path it leaves to git may be one git reads as it starts (.gitattributes
// and every other .git-like name make it fail).
func (r *Repo) pathsTree(ctx context.Context, base string, paths []string) (string, error) {
	tree, err := r.buildTree(ctx, base, paths)
	if err == nil {
		r.lastTree = tree
		return tree, nil
	}
	if errors.Is(err, errNotPlain) {
		// The answer was just read, from configuration files not
		// changed since (freshConfig): asking again would cost a git
		// each iteration in such a repository.
		r.closeBatches()
	} else {
		r.forgetConfig()
	}
	r.logger.Debug("building the tree from the changed paths failed; staging them", "err", err)
	if base != r.indexTree {
		return r.currentTree(ctx)
	}
	if err := r.stagePaths(ctx, paths); err != nil {
		r.logger.Debug("staging the changed paths failed; staging the whole tree", "err", err)
		return r.currentTree(ctx)
	}
	return r.writeTree(ctx)
}

// stagePaths brings the private index up to date for paths only.
func (r *Repo) stagePaths(ctx context.Context, paths []string) error {
	r.indexTree, r.lastTree = "", ""
	if !r.indexExists() {
		return r.stage(ctx)
	}
	var list []string
	for _, p := range paths {
		if p == "" || workspace.IsPrivate(p) || inGitDir(p) {
			continue
		}
		if d := r.nestedRepo(p); d != "" {
			// git add records a repository as one entry; update-index
			// would take its files one by one.
			return fmt.Errorf("%s is inside the repository %s", p, d)
		}
		list = append(list, p)
	}
	if len(list) == 0 {
		return nil
	}
	in := []byte(strings.Join(list, "\x00") + "\x00")
	_, err := r.git(ctx, in, nil, "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

// nestedRepo returns the directory above the slash-separated path p that
// holds a repository of its own (a .git entry), "" when none does.
func (r *Repo) nestedRepo(p string) string {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if _, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(d), ".git")); err == nil {
			return d
		}
	}
	return ""
}

// indexExists reports whether the private index is there (stage seeds it
// when it is not).
func (r *Repo) indexExists() bool {
	_, err := os.Stat(r.index)
	return err == nil
}

// inGitDir reports whether the slash-separated path p lies in a .git
// directory (the repository's own or a nested one).
func inGitDir(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// FlushIterations waits until the chain holds every iteration recorded
// so far, and returns the first error writing it met since the last
// flush. The task's loop calls it as the task ends.
func (r *Repo) FlushIterations() error {
	r.mu.Lock()
	r.closeBatches()
	r.mu.Unlock()
	return r.commits.flush()
}

// iterationCommit is one iteration waiting for its commit on the chain.
type iterationCommit struct {
	ref, tree, msg string
	at             time.Time
}

// iterationCommits writes the chain's commits in the background, in the
// order the iterations were recorded. At most one worker runs at a time.
type iterationCommits struct {
	mu      sync.Mutex
	pending []iterationCommit
	running bool
	hurry   chan struct{} // closed to skip the delay
	done    chan struct{} // closed when the running worker returns
	err     error
	delay   time.Duration // 0: iterationCommitDelay
	// tips are the chains' tips the worker wrote (its own).
	tips map[string]string
	// objects writes the commits in the worker itself, into the
	// directory looseObjects names ("" when git writes them); known
	// once it asked.
	objects      looseWriter
	objectsKnown bool
}

func (q *iterationCommits) add(r *Repo, c iterationCommit) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, c)
	if q.running {
		return
	}
	q.running = true
	q.hurry, q.done = make(chan struct{}), make(chan struct{})
	delay := q.delay
	if delay == 0 {
		delay = iterationCommitDelay
	}
	go q.work(r, delay, q.hurry, q.done)
}

func (q *iterationCommits) work(r *Repo, delay time.Duration, hurry, done chan struct{}) {
	defer close(done)
	for {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-hurry:
			t.Stop()
		}
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		if err := q.write(r, batch); err != nil {
			r.logger.Warn("write the iterations' chain", "err", err)
			q.mu.Lock()
			if q.err == nil {
				q.err = err
			}
			q.mu.Unlock()
		}
	}
}

// write commits batch, each on its chain's tip, and moves the tips in
// one update-ref.
func (q *iterationCommits) write(r *Repo, batch []iterationCommit) error {
	ctx := context.Background()
	if q.tips == nil {
		q.tips = map[string]string{}
	}
	if !q.objectsKnown {
		q.objects, q.objectsKnown = looseWriter{dir: r.looseObjects(ctx)}, true
	}
	var order []string
	moved := map[string]bool{}
	r.pendingTrees.wait(r)
	var lost error
	for _, c := range batch {
		if r.pendingTrees.lost(c.tree) {
			if _, err := r.git(ctx, nil, nil, "cat-file", "-e", c.tree); err == nil {
				r.pendingTrees.found(c.tree) // a later whole read wrote it
			}
		}
		if r.pendingTrees.lost(c.tree) {
			// That iteration alone goes without its commit.
			if lost == nil {
				lost = fmt.Errorf("record %s: git did not write its tree", c.msg)
			}
			continue
		}
		parent, known := q.tips[c.ref]
		if !known {
			if out, err := r.git(ctx, nil, nil, "rev-parse", "-q", "--verify", c.ref+"^{commit}"); err == nil {
				parent = strings.TrimSpace(string(out))
			}
		}
		id, err := q.commit(ctx, r, c, parent)
		if err != nil {
			return fmt.Errorf("record %s: %w", c.msg, err)
		}
		q.tips[c.ref] = id
		if !moved[c.ref] {
			moved[c.ref] = true
			order = append(order, c.ref)
		}
	}
	var in strings.Builder
	for _, ref := range order {
		fmt.Fprintf(&in, "update %s %s\n", ref, q.tips[ref])
	}
	if len(order) == 0 {
		return lost
	}
	if _, err := r.git(ctx, []byte(in.String()), nil, "update-ref", "-m", "ralph iteration", "--stdin"); err != nil {
		for _, ref := range order {
			delete(q.tips, ref) // ask git next time
		}
		return fmt.Errorf("record iterations: %w", err)
	}
	return lost
}

// commit writes c's commit on parent ("" for none) and returns its id:
// itself when it can (looseObjects), by `git commit-tree` otherwise.
func (q *iterationCommits) commit(ctx context.Context, r *Repo, c iterationCommit, parent string) (string, error) {
	if q.objects.dir != "" {
		return q.objects.write("commit", commitObject(c.tree, parent, c.msg, c.at))
	}
	args := []string{"commit-tree", "--no-gpg-sign", c.tree, "-m", c.msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	date := fmt.Sprintf("%d +0000", c.at.Unix())
	out, err := r.git(ctx, nil, []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// flush wakes the worker and waits for it.
func (q *iterationCommits) flush() error {
	q.mu.Lock()
	if !q.running {
		err := q.err
		q.err = nil
		q.mu.Unlock()
		return err
	}
	hurry, done := q.hurry, q.done
	select {
	case <-hurry:
	default:
		close(hurry)
	}
	q.mu.Unlock()
	<-done
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.err
	q.err = nil
	return err
}

// IterationBase is the tree task's latest iteration 0 recorded
// (SaveIteration with n = 0, as the task's loop starts: the tree as the
// task's start left it), "" when there is none. The latest: a rollback
// can give a new task a number an old one had, and the chain goes on.
func (r *Repo) IterationBase(ctx context.Context, task int) string {
	_ = r.FlushIterations()
	ref := fmt.Sprintf("%stask-%d", IterationRefPrefix, task)
	out, err := r.git(ctx, nil, nil, "log", "--format=%T %s", ref, "--")
	if err != nil {
		return ""
	}
	want := fmt.Sprintf("task %d iteration 0", task)
	for _, line := range strings.Split(string(out), "\n") {
		if tree, subject, ok := strings.Cut(line, " "); ok && subject == want {
			return tree
		}
	}
	return ""
}

// StatTrees is the size of the change from tree a to tree b ("" is the
// empty tree).
func (r *Repo) StatTrees(ctx context.Context, a, b string) (DiffStat, error) {
	out, err := r.git(ctx, nil, nil, append([]string{"diff-tree", "-r", "-z", "--numstat", "--no-renames", orEmpty(a), orEmpty(b), "--", "."}, harnessFiles...)...)
	if err != nil {
		return DiffStat{}, fmt.Errorf("diff stat: %w", err)
	}
	return parseNumStat(out), nil
}

// DiffTrees lists the files that differ from tree a to tree b, and the
// unified diff of each (cut at max bytes in all), by path.
func (r *Repo) DiffTrees(ctx context.Context, a, b string, max int) ([]FileChange, map[string]string, error) {
	out, err := r.git(ctx, nil, nil, append([]string{"diff-tree", "-r", "-z", "--name-status", "--no-renames", orEmpty(a), orEmpty(b), "--", "."}, harnessFiles...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("diff: %w", err)
	}
	changes := parseNameStatus(out)
	texts := map[string]string{}
	for _, c := range changes {
		if max <= 0 {
			break
		}
		d, err := r.git(ctx, nil, nil, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", orEmpty(a), orEmpty(b), "--", c.Path)
		if err != nil {
			continue
		}
		text := string(d)
		if len(text) > max {
			text = text[:max] + "\n… (cut)"
		}
		max -= len(text)
		texts[c.Path] = text
	}
	return changes, texts, nil
}

// harnessFiles leave the harness's own bookkeeping in .ralph/ out of an
// iteration's diff: it changes every iteration and is not the agent's
// work (plan.tsx and summary.md are, and stay in).
var harnessFiles = func() []string {
	var ex []string
	for _, name := range []string{workspace.Feedback, workspace.Status, workspace.Phase, workspace.Iteration,
		workspace.Task, workspace.Origin, workspace.TaskCounter, workspace.TaskHistory} {
		ex = append(ex, ":(exclude)"+workspace.Dir+"/"+name)
	}
	return ex
}()

func orEmpty(tree string) string {
	if tree == "" {
		return emptyTree
	}
	return tree
}

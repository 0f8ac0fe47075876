// Package mergequeue lands finished branches on a target branch one at a
// time, in the order they arrive, keeping the target's history linear.
//
// Its input is "a branch in this repository that is done", checked out in
// a worktree of its own; its output is Landed (the target now points at the
// branch's rebased tip) or Conflict (the branch could not be rebased onto
// the target's tip, or the gates failed on the rebased result):
//
//	branch done ─► rebase onto the target's tip ─► gates ─► fast-forward target ─► Landed
//	                      │ conflict                  │ fail
//	                      └──────────────► Conflict ◄─┘
//
// The target is only ever fast-forwarded, never merged into. When the
// target is checked out in a working tree (the user's), the fast-forward is
// `git merge --ff-only` there: git carries the user's uncommitted and
// untracked changes across untouched, and refuses when the landing would
// overwrite one of them. The queue then waits, says so once, and tries
// again until the user commits or stashes the overlapping change (or the
// context ends); nothing of the user's is ever overwritten.
package mergequeue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// Outcome is how a landing ended.
type Outcome string

// Outcomes.
const (
	// Landed: the target points at the rebased branch.
	Landed Outcome = "landed"
	// Conflict: the branch conflicts with the target's tip, or the gates
	// failed on the rebased result. The branch is left as it was before
	// the rebase (conflict) or rebased (gate failure).
	Conflict Outcome = "conflict"
)

// Request is one branch to land.
type Request struct {
	// Branch is the short branch name ("ralph/spec/0001-foo").
	Branch string
	// Worktree is the working tree where Branch is checked out; the
	// rebase and the gates run there.
	Worktree string
	// Name names the request in messages (a spec or task id); default Branch.
	Name string
}

// Result is one landing's outcome.
type Result struct {
	Outcome Outcome `json:"outcome"`
	// Commit is the target's new tip (Landed) or the tip the branch could
	// not land on (Conflict).
	Commit string `json:"commit"`
	// Rebased is true when the branch had to be rebased.
	Rebased bool `json:"rebased"`
	// Reason is the conflict or gate failure, for the branch's author:
	// the files in conflict or the gates' feedback.
	Reason string `json:"reason,omitempty"`
	// Files are the conflicting files (empty for a gate failure).
	Files []string `json:"files,omitempty"`
}

// Gates checks a rebased branch in its worktree: "" when it may land,
// else the failure as feedback, its first line a summary (the failed
// gates). An error ends the landing.
type Gates func(ctx context.Context, dir string) (problem string, err error)

// Options configure a Queue.
type Options struct {
	// Repo is any working tree of the repository (usually the user's).
	Repo string
	// Target is the short name of the branch branches land on ("main").
	Target string
	// Gates run on a rebased branch before it lands; nil runs none.
	Gates Gates
	// Wait is how often a landing blocked by the user's uncommitted
	// changes is retried; default 1s.
	Wait time.Duration
	// Say receives one line when a landing has to wait, and when it goes
	// on; nil discards them.
	Say    func(line string)
	Logger *slog.Logger
}

// Queue lands branches one at a time, first come first served. Its
// methods are safe for concurrent use.
type Queue struct {
	opt Options
	log *slog.Logger
	// mark is the landing mark's path (gitMarked), once known.
	mark string

	mu      sync.Mutex
	waiting []chan struct{} // tickets after the running one
	busy    bool
}

// New returns a queue.
func New(opt Options) *Queue {
	if opt.Wait <= 0 {
		opt.Wait = time.Second
	}
	if opt.Say == nil {
		opt.Say = func(string) {}
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Queue{opt: opt, log: logger.With("component", "mergequeue", "target", opt.Target)}
}

// acquire waits for the queue's turn, in arrival order.
func (q *Queue) acquire(ctx context.Context) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	ticket := make(chan struct{})
	q.waiting = append(q.waiting, ticket)
	q.mu.Unlock()
	select {
	case <-ticket:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		for i, t := range q.waiting {
			if t == ticket {
				q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
				q.mu.Unlock()
				return ctx.Err()
			}
		}
		q.mu.Unlock()
		// The turn was handed over as the context ended: pass it on.
		q.release()
		return ctx.Err()
	}
}

func (q *Queue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	next := q.waiting[0]
	q.waiting = q.waiting[1:]
	close(next)
}

// Land rebases the request's branch onto the target's tip, runs the gates
// when it had to rebase, and fast-forwards the target to it. Requests land
// one at a time in the order Land was called. An error means the landing
// could not be attempted (git failed, the context ended); the branch is
// then as it was, or rebased.
func (q *Queue) Land(ctx context.Context, req Request) (Result, error) {
	if req.Name == "" {
		req.Name = req.Branch
	}
	if err := q.acquire(ctx); err != nil {
		return Result{}, err
	}
	defer q.release()
	res, err := q.land(ctx, req)
	if err != nil {
		return res, fmt.Errorf("land %s on %s: %w", req.Name, q.opt.Target, err)
	}
	return res, nil
}

func (q *Queue) land(ctx context.Context, req Request) (Result, error) {
	if err := AbortRebase(ctx, req.Worktree); err != nil {
		return Result{}, err
	}
	said := false
	for {
		tip, err := revParse(ctx, q.opt.Repo, "refs/heads/"+q.opt.Target)
		if err != nil {
			return Result{}, err
		}
		head, err := revParse(ctx, req.Worktree, "HEAD")
		if err != nil {
			return Result{}, err
		}
		rebased := false
		if !isAncestor(ctx, req.Worktree, tip, head) {
			files, err := q.rebase(ctx, req.Worktree, tip)
			if err != nil {
				return Result{}, err
			}
			if files != nil {
				reason := fmt.Sprintf("rebasing %s onto %s (%s) conflicts in %s", req.Branch, q.opt.Target, short(tip), strings.Join(files, ", "))
				q.log.Info("conflict", "branch", req.Branch, "files", files)
				return Result{Outcome: Conflict, Commit: tip, Reason: reason, Files: files}, nil
			}
			rebased = true
			if head, err = revParse(ctx, req.Worktree, "HEAD"); err != nil {
				return Result{}, err
			}
			if q.opt.Gates != nil {
				problem, err := q.opt.Gates(ctx, req.Worktree)
				if err != nil {
					return Result{}, fmt.Errorf("gates: %w", err)
				}
				if problem != "" {
					q.log.Info("gates failed after rebase", "branch", req.Branch)
					reason := fmt.Sprintf("after rebasing %s onto %s (%s) the gates failed: %s", req.Branch, q.opt.Target, short(tip), problem)
					return Result{Outcome: Conflict, Commit: tip, Rebased: true, Reason: reason}, nil
				}
			}
		}
		blocked, err := q.fastForward(ctx, tip, head)
		if err != nil {
			return Result{}, err
		}
		if blocked == errMoved {
			continue
		}
		if blocked == "" {
			if said {
				q.opt.Say(fmt.Sprintf("%s: landed on %s after waiting", req.Name, q.opt.Target))
			}
			q.log.Info("landed", "branch", req.Branch, "commit", head, "rebased", rebased)
			return Result{Outcome: Landed, Commit: head, Rebased: rebased}, nil
		}
		if !said {
			q.opt.Say(fmt.Sprintf("%s: waiting to land on %s: %s; commit or stash those changes and it lands", req.Name, q.opt.Target, blocked))
			said = true
		}
		t := time.NewTimer(q.opt.Wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Result{}, ctx.Err()
		case <-t.C:
		}
	}
}

// errMoved is fastForward's word for a target that moved since the
// landing read its tip.
const errMoved = "\x00moved"

// rebase rebases the worktree's branch onto tip; it returns the
// conflicting files (nil when the rebase succeeded), the rebase aborted.
func (q *Queue) rebase(ctx context.Context, dir, tip string) ([]string, error) {
	_, err := git.Run(ctx, dir, "-c", "rebase.autoStash=true", "rebase", "--no-update-refs", tip)
	if err == nil {
		return nil, nil
	}
	out, _ := git.Run(ctx, dir, "diff", "--name-only", "--diff-filter=U")
	files := strings.Fields(out)
	if aerr := AbortRebase(ctx, dir); aerr != nil {
		return nil, errors.Join(err, aerr)
	}
	if len(files) == 0 {
		// The rebase stopped before any file conflicted (an untracked
		// file in the way, say): report git's own words.
		msg := err.Error()
		if ge := (*git.Error)(nil); errors.As(err, &ge) {
			msg = ge.Stderr + "\n" + ge.Stdout
		}
		files = []string{firstLine(msg)}
	}
	return files, nil
}

// fastForward moves the target from tip to commit. When the target is
// checked out in a working tree, it merges there with --ff-only so the
// files follow; a refusal because of the user's own changes comes back as
// blocked (git's reason), anything else as an error.
func (q *Queue) fastForward(ctx context.Context, tip, commit string) (blocked string, err error) {
	dir, err := worktree.CheckedOut(ctx, q.opt.Repo, q.opt.Target)
	if err != nil {
		return "", err
	}
	if dir == "" {
		_, err := q.gitMarked(ctx, q.opt.Repo, "update-ref", "-m", "ralph: land", "refs/heads/"+q.opt.Target, commit, tip)
		return "", err
	}
	cur, err := revParse(ctx, dir, "HEAD")
	if err != nil {
		return "", err
	}
	if cur != tip {
		return errMoved, nil // someone committed meanwhile: rebase again
	}
	for retried := false; ; retried = true {
		_, err = q.gitMarked(ctx, dir, "merge", "--ff-only", "--no-edit", "-q", commit)
		if err == nil {
			return "", nil
		}
		msg := err.Error()
		if ge := (*git.Error)(nil); errors.As(err, &ge) {
			msg = ge.Stderr + "\n" + ge.Stdout
		}
		if !strings.Contains(msg, "would be overwritten") && !strings.Contains(msg, "local changes") {
			return "", err
		}
		files := overlapping(msg)
		if !retried && len(files) > 0 && landedAlready(ctx, dir, commit, files) {
			// A landing killed inside its merge wrote these files and
			// not HEAD: they are the commit's own, not the user's.
			// Staged as they are, the merge takes them as its own.
			if _, err := q.gitMarked(ctx, dir, append([]string{"add", "--"}, files...)...); err != nil {
				return "", err
			}
			continue
		}
		if len(files) == 0 {
			return "your uncommitted changes overlap it (" + firstLine(msg) + ")", nil
		}
		return "your uncommitted changes overlap it (" + strings.Join(files, ", ") + ")", nil
	}
}

// overlapping extracts the file list of git's "would be overwritten" message.
func overlapping(msg string) []string {
	var files []string
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "\t") {
			files = append(files, strings.TrimSpace(l))
		}
	}
	return files
}

// landedAlready reports whether every one of files in the working tree at
// dir is, byte for byte, the file commit has at that path: what a merge to
// commit killed after it wrote them leaves.
func landedAlready(ctx context.Context, dir, commit string, files []string) bool {
	for _, f := range files {
		want, err := git.Line(ctx, dir, "rev-parse", "--verify", "-q", commit+":"+f)
		if err != nil {
			return false
		}
		got, err := git.Line(ctx, dir, "hash-object", "--no-filters", "--", f)
		if err != nil || got != want {
			return false
		}
	}
	return true
}

// AbortRebase aborts a rebase left in progress in dir (by a crash), if any.
func AbortRebase(ctx context.Context, dir string) error {
	for _, name := range []string{"rebase-merge", "rebase-apply"} {
		p, err := git.Run(ctx, dir, "rev-parse", "--git-path", name)
		if err != nil {
			return err
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err == nil {
			if _, err := git.Run(ctx, dir, "rebase", "--abort"); err != nil {
				return err
			}
			return nil
		}
	}
	return nil
}

func revParse(ctx context.Context, dir, rev string) (string, error) {
	return git.Line(ctx, dir, "rev-parse", "--verify", "-q", rev+"^{commit}")
}

func isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := git.Run(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// gitMarked runs a git of the landing's that writes the user's
// repository (the merge that moves the target and its files, the
// update-ref, the add before a merge again) under the landing mark: a
// file in the repository's git directory written before the git starts
// and removed once it returns. A mark found there says a landing's git
// was running when its ralph died; if this git then stops on a lock file
// made since that mark (the dead git's, left when a kill of ralph's
// process group ended it), the lock is removed as git.RemoveStaleLock
// removes one, once no git runs in the repository, and the git runs
// again. Without a mark, no lock in the user's repository is touched.
func (q *Queue) gitMarked(ctx context.Context, dir string, args ...string) (string, error) {
	if q.mark == "" {
		common, err := git.Line(ctx, q.opt.Repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return "", err
		}
		q.mark = filepath.Join(common, "ralph", "landing")
	}
	died, markErr := os.Stat(q.mark)
	// Without a mark the landing goes on: the mark only lets a later one
	// recover.
	if err := os.MkdirAll(filepath.Dir(q.mark), 0o755); err == nil {
		err = os.WriteFile(q.mark, nil, 0o644)
	}
	out, err := git.Run(ctx, dir, args...)
	// A git killed inside a merge may leave two locks: the index's and a
	// ref's.
	for tries := 0; err != nil && markErr == nil && tries < 3 && git.RemoveStaleLock(ctx, err, died.ModTime()); tries++ {
		q.log.Warn("removed a lock file a landing's git left when its ralph died", "lock", git.LockedPath(err))
		out, err = git.Run(ctx, dir, args...)
	}
	if markErr == nil && git.LockedPath(err) != "" {
		// Still stopped on a lock (a git ran there as it looked): the dead
		// landing's mark stays for the next attempt.
		_ = os.Chtimes(q.mark, died.ModTime(), died.ModTime())
	} else {
		_ = os.Remove(q.mark)
	}
	return out, err
}

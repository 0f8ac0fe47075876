package guard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// AgentRefPrefix is where History keeps the agent's version of what it put
// back, one folder per check: refs/ralph/agent/<keep>/tip, head, worktree,
// and ralph/… for snapshot refs. It is not the snapshot namespace
// (snapshot.RefPrefix), so snapshot listings never show these refs, and
// History does not watch it: the agent may do as it likes with them.
const AgentRefPrefix = "refs/ralph/agent/"

// Origin is where a task started: the branch checked out and its commit.
// The store keeps it, so the agent cannot rewrite it.
type Origin struct {
	// Branch is the full ref name (refs/heads/main); "" when HEAD was
	// detached, and then HEAD itself is what is guarded.
	Branch string `json:"branch,omitempty"`
	// Head is the commit HEAD was at; "" in a repository with no commit
	// yet, where there is no history to guard.
	Head string `json:"head,omitempty"`
}

// ReadOrigin reads where the working tree at dir stands now, to record as
// a task's Origin.
func ReadOrigin(ctx context.Context, dir string) (Origin, error) {
	ref, head, err := readHEAD(ctx, dir)
	if err != nil {
		return Origin{}, fmt.Errorf("read the task's origin: %w", err)
	}
	return Origin{Branch: ref, Head: head}, nil
}

// HistoryMark is the state a check compares with: the guarded branch's tip and
// the snapshot refs as they stood before the agent ran.
type HistoryMark struct {
	// Tip is the guarded branch's commit (HEAD's, for a detached
	// origin). It descends from Origin.Head: it is where History puts the
	// branch back.
	Tip string `json:"tip,omitempty"`
	// Refs maps each snapshot ref (refs/ralph/snapshots/… and
	// refs/ralph/tip) to its commit. It is never modified once read:
	// marks and the reads they come from share it.
	Refs map[string]string `json:"refs,omitempty"`
	// read is the read of the refs the mark was taken from, while this
	// process keeps it (refcache.go): 0 for none, such as a mark from the
	// store.
	read uint64
}

// Same reports whether m and o say the same: the same tip and snapshot
// refs.
func (m HistoryMark) Same(o HistoryMark) bool {
	if m.Tip != o.Tip {
		return false
	}
	return (m.read != 0 && m.read == o.read) || maps.Equal(m.Refs, o.Refs)
}

// ReadHistoryMark reads the mark of the repository at dir for a task that
// started at o.
func ReadHistoryMark(ctx context.Context, dir string, o Origin) (HistoryMark, error) {
	s, err := readHistory(ctx, dir, o)
	if err != nil {
		return HistoryMark{}, fmt.Errorf("read the history mark: %w", err)
	}
	return HistoryMark{Tip: s.tip, Refs: s.refs, read: s.read}, nil
}

// RefChange is one snapshot ref the agent created, moved or deleted.
type RefChange struct {
	Ref string `json:"ref"`
	// Change is "created", "moved" or "deleted".
	Change string `json:"change"`
	// Kept is the ref that holds the agent's value of a created or moved
	// ref.
	Kept string `json:"kept,omitempty"`
}

// HistoryReport says what the agent did to the history and what History did about
// it. The zero HistoryReport means nothing happened.
type HistoryReport struct {
	// Branch is the guarded branch's short name; "" for a detached origin.
	Branch string `json:"branch,omitempty"`
	// Switched is where the agent left HEAD instead of on Branch: another
	// branch's short name, or "a detached HEAD".
	Switched string `json:"switched,omitempty"`
	// Deleted is set when the agent deleted Branch.
	Deleted bool `json:"deleted,omitempty"`
	// Dropped counts the commits the branch had before the iteration that
	// the agent's tip no longer has, when that tip lost the task's start.
	Dropped int `json:"dropped,omitempty"`
	// Rewrote is set when the agent's tip has commits of its own in place
	// of the dropped ones (a rebase, an amend), rather than being one of
	// the branch's older commits (a reset).
	Rewrote bool `json:"rewrote,omitempty"`
	// Refs are the snapshot refs the agent created, moved or deleted.
	Refs []RefChange `json:"refs,omitempty"`
	// AgentTip holds the branch as the agent left it; AgentHead holds
	// HEAD's commit when the agent left it elsewhere.
	AgentTip  string `json:"agent_tip,omitempty"`
	AgentHead string `json:"agent_head,omitempty"`
	// Worktree holds the agent's working tree (its uncommitted changes and
	// untracked files, ralph's .ralph/ left out) as a commit on the
	// agent's HEAD, when there was something uncommitted.
	Worktree string `json:"worktree,omitempty"`
	// Carried is set when the agent's uncommitted changes are in the
	// working tree again, on top of the restored branch.
	Carried bool `json:"carried,omitempty"`
	// Problems lists what History could not put back.
	Problems []string `json:"problems,omitempty"`
}

// Changed reports whether the agent changed anything History watches.
func (r HistoryReport) Changed() bool {
	return r.Switched != "" || r.Deleted || r.Dropped > 0 || len(r.Refs) > 0
}

// History compares the repository at dir with where the task started (o) and
// with the mark taken before the agent ran (m). When the agent switched or
// detached HEAD, deleted the branch, left a branch tip that no longer
// descends from o.Head, or created, moved or deleted a snapshot ref, History
// puts it back and keeps the agent's version under
// AgentRefPrefix+keep+"/". New commits on the branch, and snapshots saved
// the way ralph saves them (a new snapshot name chained on the tip: the
// API agent's snapshot_save tool, a person's `ralph snapshot save`), are
// not changes.
//
// The working tree. The user's commits must come back on the branch and
// into the files, and the agent's uncommitted work must not be lost. History
// first saves the agent's whole working tree as a commit (HistoryReport.Worktree),
// then checks the branch out as `git checkout` does: the agent's
// uncommitted changes are carried over onto the restored branch wherever
// the restored commits did not touch the same files (HistoryReport.Carried).
// Where they did, a merge would leave conflict markers in the user's
// files, so the branch's files win instead, and the agent's version stays
// in HistoryReport.Worktree, which its feedback names. Files git ignores and
// ralph's .ralph/ are never touched.
//
// History returns the mark to compare the next check with, and an error
// only when it cannot tell what changed; what it could not put back is in
// HistoryReport.Problems. A check that finds nothing costs one git call, two when
// the branch has new commits.
func History(ctx context.Context, dir string, o Origin, m HistoryMark, keep string) (HistoryReport, HistoryMark, error) {
	rep, now, err := checkHistory(ctx, dir, o, m, keep)
	if err != nil {
		return HistoryReport{}, HistoryMark{}, fmt.Errorf("guard the history: %w", err)
	}
	if rep.Changed() {
		// Read what was put back, not what the agent left.
		if now, err = readHistory(ctx, dir, o); err != nil {
			return rep, HistoryMark{}, fmt.Errorf("guard the history: %w", err)
		}
	}
	return rep, HistoryMark{Tip: now.tip, Refs: now.refs, read: now.read}, nil
}

func checkHistory(ctx context.Context, dir string, o Origin, m HistoryMark, keep string) (HistoryReport, historyState, error) {
	now, err := readHistory(ctx, dir, o)
	if err != nil {
		return HistoryReport{}, now, err
	}
	rep := HistoryReport{Branch: strings.TrimPrefix(o.Branch, "refs/heads/")}
	if m.read != 0 && now.read == m.read && (o.Head == "" || now.tip != "" && (o.Branch == "" || now.ref == o.Branch)) {
		// The very read the mark was taken from, which found the branch
		// where the task started it: the files holding the refs have not
		// changed since, so nothing has moved. (A read that found HEAD
		// switched or the branch gone is judged again, and put back
		// again.)
		return rep, now, nil
	}
	bad := false // the guarded tip lost the task's start
	if o.Head != "" {
		if o.Branch != "" && now.ref != o.Branch {
			rep.Switched = "a detached HEAD"
			if now.ref != "" {
				rep.Switched = strings.TrimPrefix(now.ref, "refs/heads/")
			}
		}
		switch {
		case now.tip == "":
			bad, rep.Deleted = true, o.Branch != ""
		case now.tip == m.Tip:
			// Where the last check left it, which descends from the start.
		default:
			kept, err := isAncestorCommit(ctx, dir, o.Head, now.tip)
			if err != nil {
				return HistoryReport{}, now, err
			}
			if !kept {
				bad = true
				rep.Dropped, rep.Rewrote = droppedCommits(ctx, dir, now.tip, m.Tip)
			}
		}
	}
	if rep.Refs, err = snapshotRefChanges(ctx, dir, m.Refs, now.refs); err != nil {
		return HistoryReport{}, now, err
	}
	if !rep.Changed() {
		return rep, now, nil
	}

	ns := AgentRefPrefix + keep + "/"
	problem := func(what string, err error) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", what, err))
	}
	keepRef := func(name, commit string) string {
		if _, err := git.Run(ctx, dir, "update-ref", "-m", "ralph: the agent's version", ns+name, commit); err != nil {
			problem("keep the agent's "+name, err)
			return ""
		}
		return ns + name
	}

	// The snapshot refs: the agent's values are kept, the harness's come
	// back.
	for i, c := range rep.Refs {
		kept := "ralph/" + strings.TrimPrefix(c.Ref, "refs/ralph/")
		var err error
		switch c.Change {
		case "created":
			rep.Refs[i].Kept = keepRef(kept, now.refs[c.Ref])
			_, err = git.Run(ctx, dir, "update-ref", "-d", c.Ref, now.refs[c.Ref])
		case "moved":
			rep.Refs[i].Kept = keepRef(kept, now.refs[c.Ref])
			fallthrough
		default:
			_, err = git.Run(ctx, dir, "update-ref", "-m", "ralph: put back", c.Ref, m.Refs[c.Ref])
		}
		if err != nil {
			problem("put back "+c.Ref, err)
		}
	}

	if !bad && rep.Switched == "" {
		return rep, now, nil
	}
	// The branch and HEAD.
	target := now.tip
	if bad {
		target = m.Tip
		if target == "" {
			target = o.Head
		}
		if now.tip != "" {
			rep.AgentTip = keepRef("tip", now.tip)
		}
	}
	if now.head != "" && now.head != now.tip {
		rep.AgentHead = keepRef("head", now.head)
	}
	saved := true // the agent's working tree is safe to replace
	if now.head != "" {
		wt, err := saveWorktree(ctx, dir, now.head)
		switch {
		case err != nil:
			saved = false
			problem("keep the agent's working tree", err)
		case wt != "":
			rep.Worktree = keepRef("worktree", wt)
		}
		// Detach HEAD where it is, files untouched, so that the checkout
		// below carries the working tree from the agent's commit to the
		// restored one.
		if _, err := git.Run(ctx, dir, "update-ref", "--no-deref", "-m", "ralph: put the history back", "HEAD", now.head); err != nil {
			problem("detach HEAD", err)
		}
	}
	hold := func() error { return nil }
	if now.head != "" {
		if hold, err = holdHarnessFiles(ctx, dir, now.head, target); err != nil {
			problem("keep ralph's .ralph/ files as they are", err)
		}
	}
	checkout := []string{"checkout", "-q", "--detach", target, "--"}
	if o.Branch != "" {
		if bad {
			if _, err := git.Run(ctx, dir, "update-ref", "-m", "ralph: put the branch back", o.Branch, target); err != nil {
				problem("put "+rep.Branch+" back", err)
			}
		}
		checkout = []string{"checkout", "-q", rep.Branch, "--"}
	}
	if _, err := git.Run(ctx, dir, checkout...); err != nil {
		// The agent's changes touch what the restored commits changed:
		// the branch wins, the agent's version is in rep.Worktree. Without
		// that copy the files stay as they are, which git status shows.
		force := append([]string{checkout[0], "-f"}, checkout[1:]...)
		if !saved {
			problem("check "+target+" out over the agent's unsaved changes", err)
		} else if _, err := git.Run(ctx, dir, force...); err != nil {
			problem("check "+target+" out", err)
		}
	} else {
		rep.Carried = rep.Worktree != ""
	}
	if err := hold(); err != nil {
		problem("put ralph's .ralph/ files back", err)
	}
	return rep, now, nil
}

// String says what happened in one line, in ralph's words: "the agent
// reset main, dropping 2 commits; the harness put it back (agent's tip
// kept at refs/ralph/agent/task-1-iteration-1-check-1/tip)".
func (r HistoryReport) String() string {
	if !r.Changed() {
		return "the agent left the history alone"
	}
	var did []string
	branch := r.Branch
	if branch == "" {
		branch = "HEAD"
	}
	if r.Switched != "" {
		did = append(did, "switched from "+branch+" to "+r.Switched)
	}
	if r.Deleted {
		did = append(did, "deleted "+branch)
	}
	if r.Dropped > 0 {
		verb := "reset"
		if r.Rewrote {
			verb = "rewrote"
		}
		did = append(did, fmt.Sprintf("%s %s, dropping %s", verb, branch, countOf(r.Dropped, "commit")))
	}
	for _, c := range r.Refs {
		name := c.Ref
		if n, ok := strings.CutPrefix(c.Ref, snapshot.RefPrefix); ok {
			name = "snapshot " + n
		}
		did = append(did, c.Change+" "+name)
	}
	s := "the agent " + strings.Join(did, ", ") + "; the harness put it back"
	var kept []string
	switch {
	case r.AgentTip != "":
		kept = append(kept, "agent's tip kept at "+r.AgentTip)
	case r.AgentHead != "":
		kept = append(kept, "agent's HEAD kept at "+r.AgentHead)
	}
	if r.Worktree != "" && !r.Carried {
		kept = append(kept, "its uncommitted work kept at "+r.Worktree)
	}
	if len(kept) > 0 {
		s += " (" + strings.Join(kept, "; ") + ")"
	}
	if len(r.Problems) > 0 {
		s += "; but could not " + strings.Join(r.Problems, "; ")
	}
	return s
}

// Feedback is what the agent reads next (feedback.md): what it did, what
// the harness did about it, where its own work is, and what it may and may
// not do with the history.
func (r HistoryReport) Feedback() string {
	var b strings.Builder
	b.WriteString("# History put back\n\n")
	fmt.Fprintf(&b, "The harness found that %s.\n\n", r.String())
	b.WriteString("The user's history is not yours to change. You may commit on top of the branch: new commits are your work and are fine. You may not reset, rebase or amend commits that were there when the task started, push with force, switch branches or detach HEAD, or create, move or delete refs under refs/ralph/ (they are ralph's snapshots). Anything of that kind is put back after every iteration.\n")
	switch {
	case r.Worktree != "" && r.Carried:
		b.WriteString("\nYour uncommitted changes are in the working tree again, on top of the restored branch.\n")
	case r.Worktree != "":
		fmt.Fprintf(&b, "\nYour uncommitted changes touched files the restored commits change, so the working tree now holds the branch's version. Yours is kept at %s: see `git diff HEAD %s` and bring back what you need by editing the files.\n", r.Worktree, r.Worktree)
	}
	if r.AgentTip != "" {
		fmt.Fprintf(&b, "\nThe branch as you left it is kept at %s; if it holds commits of yours, cherry-pick them onto the branch (`git cherry-pick <commit>`), which adds new commits.\n", r.AgentTip)
	}
	return b.String()
}

// historyState is where the repository stands.
type historyState struct {
	ref  string // the branch HEAD is on (full ref), "" when detached
	head string // HEAD's commit, "" when there is none
	tip  string // the guarded branch's commit, "" when it is gone
	refs map[string]string
	read uint64 // the read kept in refReads this is, 0 for none
}

func readHistory(ctx context.Context, dir string, o Origin) (historyState, error) {
	s, ok, record := cachedHistory(ctx, dir, o)
	if ok {
		return s, nil
	}
	s, err := readHistoryGit(ctx, dir, o)
	if err == nil && record != nil {
		s.read = record(s)
	}
	return s, err
}

// readHistoryGit is readHistory asking git.
func readHistoryGit(ctx context.Context, dir string, o Origin) (historyState, error) {
	// One git call in the common case: the branch (marked when HEAD is
	// on it) and the snapshot refs.
	patterns := []string{snapshot.RefPrefix, snapshot.TipRef}
	if o.Branch != "" {
		patterns = append(patterns, o.Branch)
	}
	out, err := git.Run(ctx, dir, append([]string{"for-each-ref", "--format=%(HEAD)%(objectname) %(refname)"}, patterns...)...)
	if err != nil {
		return historyState{}, err
	}
	s := historyState{refs: map[string]string{}}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		if len(line) < 2 {
			continue
		}
		current := line[0] == '*'
		c, ref, ok := strings.Cut(line[1:], " ")
		switch {
		case !ok:
		case ref == o.Branch:
			s.tip = c
			if current {
				s.ref, s.head = ref, c
			}
		case ref == snapshot.TipRef || strings.HasPrefix(ref, snapshot.RefPrefix):
			s.refs[ref] = c
		}
	}
	if s.ref != "" {
		return s, nil
	}
	// HEAD is elsewhere, or the task started on a detached HEAD.
	if s.ref, s.head, err = readHEAD(ctx, dir); err != nil {
		return historyState{}, err
	}
	if o.Branch == "" {
		s.tip = s.head
	}
	return s, nil
}

// readHEAD returns the branch HEAD is on ("" when detached) and its
// commit ("" when the branch has no commit yet).
func readHEAD(ctx context.Context, dir string) (ref, head string, err error) {
	ref, err = git.Line(ctx, dir, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		if !gitExited(err, 1) {
			return "", "", err
		}
		ref = ""
	}
	head, err = resolveCommit(ctx, dir, "HEAD")
	return ref, head, err
}

// resolve returns the commit name points at, "" when there is none.
func resolveCommit(ctx context.Context, dir, name string) (string, error) {
	c, err := git.Line(ctx, dir, "rev-parse", "-q", "--verify", name+"^{commit}")
	if gitExited(err, 1) {
		return "", nil
	}
	return c, err
}

// refChanges compares the snapshot refs before (old) and after (now). A
// new ref with a snapshot name whose commit descends from the old tip,
// and the tip moving to such a commit, is a snapshot saved as ralph saves
// them, not a change.
func snapshotRefChanges(ctx context.Context, dir string, old, now map[string]string) ([]RefChange, error) {
	oldTip := old[snapshot.TipRef]
	saved := map[string]bool{}
	var out []RefChange
	for ref, c := range now {
		if _, had := old[ref]; had || ref == snapshot.TipRef {
			continue
		}
		name, _ := strings.CutPrefix(ref, snapshot.RefPrefix)
		chained := oldTip == ""
		if !chained {
			var err error
			if chained, err = isAncestorCommit(ctx, dir, oldTip, c); err != nil {
				// Unsure is not "the agent made it": never delete a
				// snapshot on a git hiccup.
				return nil, err
			}
		}
		if snapshot.ValidName(name) && chained {
			saved[c] = true
			continue
		}
		out = append(out, RefChange{Ref: ref, Change: "created"})
	}
	if c, ok := now[snapshot.TipRef]; ok && oldTip == "" && !saved[c] {
		out = append(out, RefChange{Ref: snapshot.TipRef, Change: "created"})
	}
	for ref, c := range old {
		nc, ok := now[ref]
		switch {
		case !ok:
			out = append(out, RefChange{Ref: ref, Change: "deleted"})
		case nc != c && !(ref == snapshot.TipRef && saved[nc]):
			out = append(out, RefChange{Ref: ref, Change: "moved"})
		}
	}
	slices.SortFunc(out, func(a, b RefChange) int { return strings.Compare(a.Ref, b.Ref) })
	return out, nil
}

// dropped counts the commits of before that tip does not have, and says
// whether tip has commits of its own (rewrote) rather than being one of
// before's ancestors.
func droppedCommits(ctx context.Context, dir, tip, before string) (n int, rewrote bool) {
	if before == "" {
		return 1, false
	}
	out, err := git.Line(ctx, dir, "rev-list", "--count", before, "^"+tip)
	if n, err = strconv.Atoi(out); err != nil || n < 1 {
		n = 1
	}
	anc, err := isAncestorCommit(ctx, dir, tip, before)
	return n, err != nil || !anc
}

// isAncestor reports whether commit a is an ancestor of (or is) b.
func isAncestorCommit(ctx context.Context, dir, a, b string) (bool, error) {
	_, err := git.Run(ctx, dir, "merge-base", "--is-ancestor", a, b)
	switch {
	case err == nil:
		return true, nil
	case gitExited(err, 1):
		return false, nil
	}
	return false, err
}

// saveWorktree commits the working tree (tracked and untracked files that
// are not ignored, ralph's .ralph/ left out) on head, with a private index
// so the user's is untouched. It returns "" when the tree is head's.
func saveWorktree(ctx context.Context, dir, head string) (string, error) {
	tmp, err := os.MkdirTemp("", "ralph-guard-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	opt := git.Options{Env: append([]string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}, git.Identity...)}
	run := func(args ...string) (string, error) {
		out, err := git.RunWith(ctx, dir, opt, args...)
		return strings.TrimSpace(string(out)), err
	}
	if _, err := run("read-tree", head); err != nil {
		return "", err
	}
	if _, err := run("add", "-A", "--", ":/", ":(exclude)"+workspace.Dir); err != nil {
		return "", err
	}
	tree, err := run("write-tree")
	if err != nil {
		return "", err
	}
	if base, err := run("rev-parse", head+"^{tree}"); err != nil || base == tree {
		return "", err
	}
	return run("commit-tree", "--no-gpg-sign", tree, "-p", head, "-m", "the agent's working tree, kept by ralph when it put the history back")
}

// holdHarnessFiles keeps ralph's files out of a checkout from commit
// from to commit to, where the user's branch tracks some of them: it
// reads the files under .ralph/ that the checkout would rewrite, makes
// them from's (so the checkout neither refuses nor is forced over them),
// and returns the function that writes the harness's versions back.
func holdHarnessFiles(ctx context.Context, dir, from, to string) (restore func() error, err error) {
	restore = func() error { return nil }
	out, err := git.Run(ctx, dir, "diff", "--name-status", "--no-renames", "--relative", "-z", from, to, "--", workspace.Dir)
	if err != nil {
		return restore, err
	}
	type file struct {
		path string
		data []byte
		mode fs.FileMode
		ok   bool
	}
	var held []file
	var inFrom []string
	// Whatever happens below, what was held is written back: a failure
	// half-way must not lose the harness's files.
	restore = func() error {
		var errs []error
		for _, h := range held {
			full := filepath.Join(dir, filepath.FromSlash(h.path))
			if !h.ok {
				if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			errs = append(errs, workspace.WriteFileMode(full, h.data, h.mode))
		}
		return errors.Join(errs...)
	}
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		p := f[i+1]
		h := file{path: p}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if fi, err := os.Lstat(full); err == nil && fi.Mode().IsRegular() {
			if h.data, err = os.ReadFile(full); err != nil {
				return restore, err
			}
			h.mode, h.ok = fi.Mode().Perm(), true
		}
		held = append(held, h)
		if f[i] == "A" { // not in from: out of the way
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return restore, err
			}
			if _, err := git.Run(ctx, dir, "rm", "-q", "--cached", "--ignore-unmatch", "--", p); err != nil {
				return restore, err
			}
		} else {
			inFrom = append(inFrom, p)
		}
	}
	if len(inFrom) > 0 {
		if _, err := git.Run(ctx, dir, append([]string{"checkout", "-q", from, "--"}, inFrom...)...); err != nil {
			return restore, err
		}
	}
	return restore, nil
}

func gitExited(err error, code int) bool {
	var ge *git.Error
	return errors.As(err, &ge) && ge.ExitCode() == code
}

func countOf(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

package guard_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/guard"
	"github.com/ralph-harness/ralph/internal/snapshot"
)

// historyRepo is a git repository with the user's history: base, then u1 and u2
// on main, and a task-1-pre snapshot.
type historyRepo struct {
	t   testing.TB
	dir string
}

func newHistoryRepo(t testing.TB) *historyRepo {
	t.Helper()
	r := &historyRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("app.txt", "base\n")
	r.write("notes.txt", "notes\n")
	r.commit("base")
	r.write("u1.txt", "the user's first commit\n")
	r.write("app.txt", "base\nu1\n")
	r.commit("u1")
	r.write("u2.txt", "the user's second commit\n")
	r.commit("u2")
	snaps, err := snapshot.Open(context.Background(), r.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snaps.Save(context.Background(), snapshot.TaskPre(1), "before task 1"); err != nil {
		t.Fatal(err)
	}
	return r
}

// start reads the origin and the history mark of a task starting now.
func (r *historyRepo) start() (guard.Origin, guard.HistoryMark) {
	r.t.Helper()
	ctx := context.Background()
	o, err := guard.ReadOrigin(ctx, r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	m, err := guard.ReadHistoryMark(ctx, r.dir, o)
	if err != nil {
		r.t.Fatal(err)
	}
	return o, m
}

func (r *historyRepo) git(args ...string) string {
	r.t.Helper()
	out, err := git.RunWith(context.Background(), r.dir, git.Options{Env: []string{
		"GIT_AUTHOR_NAME=user", "GIT_AUTHOR_EMAIL=user@ralph.invalid",
		"GIT_COMMITTER_NAME=user", "GIT_COMMITTER_EMAIL=user@ralph.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "HOME=" + r.dir,
	}}, args...)
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

func (r *historyRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *historyRepo) read(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func (r *historyRepo) commit(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

func (r *historyRepo) snapshots() []string {
	r.t.Helper()
	snaps, err := snapshot.Open(context.Background(), r.dir, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	ss, err := snaps.List(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name+"="+s.Commit)
	}
	return names
}

func TestHistory(t *testing.T) {
	tests := []struct {
		name  string
		agent func(r *historyRepo)
		// want is the report's line; "" means no report.
		want string
		// check looks at the repository after History.
		check func(t *testing.T, r *historyRepo, rep guard.HistoryReport)
	}{
		{
			name:  "reset --hard HEAD~2",
			agent: func(r *historyRepo) { r.git("reset", "-q", "--hard", "HEAD~2") },
			want:  "the agent reset main, dropping 2 commits; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip)",
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if got := r.read("u1.txt") + r.read("u2.txt"); got != "the user's first commit\nthe user's second commit\n" {
					t.Errorf("the user's files after the guard: %q", got)
				}
				if got := r.git("log", "-1", "--format=%s", "refs/ralph/agent/k/tip"); got != "base" {
					t.Errorf("the agent's tip is kept at %q, want base", got)
				}
			},
		},
		{
			name:  "rebase dropping a commit",
			agent: func(r *historyRepo) { r.git("rebase", "-q", "--onto", "HEAD~2", "HEAD~1") },
			want:  "the agent rewrote main, dropping 2 commits; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip)",
		},
		{
			name: "amend",
			agent: func(r *historyRepo) {
				r.write("u2.txt", "the agent's version\n")
				r.git("commit", "-q", "-a", "--amend", "-m", "u2 amended")
			},
			want: "the agent rewrote main, dropping 1 commit; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip)",
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if got := r.read("u2.txt"); got != "the user's second commit\n" {
					t.Errorf("u2.txt after the guard: %q", got)
				}
			},
		},
		{
			name: "branch switch",
			agent: func(r *historyRepo) {
				r.git("checkout", "-q", "-b", "elsewhere", "HEAD~1")
				r.write("agent.txt", "on another branch\n")
				r.commit("agent's commit elsewhere")
			},
			want: "the agent switched from main to elsewhere; the harness put it back (agent's HEAD kept at refs/ralph/agent/k/head)",
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if got := r.read("agent.txt"); !strings.HasPrefix(got, "<") {
					t.Errorf("agent.txt of the other branch is still in the working tree: %q", got)
				}
			},
		},
		{
			name:  "detached HEAD",
			agent: func(r *historyRepo) { r.git("checkout", "-q", "--detach", "HEAD~2") },
			want:  "the agent switched from main to a detached HEAD; the harness put it back (agent's HEAD kept at refs/ralph/agent/k/head)",
		},
		{
			name: "branch deleted",
			agent: func(r *historyRepo) {
				r.git("checkout", "-q", "-b", "other")
				r.git("branch", "-q", "-D", "main")
			},
			want: "the agent switched from main to other, deleted main; the harness put it back (agent's HEAD kept at refs/ralph/agent/k/head)",
		},
		{
			name:  "snapshot ref deleted",
			agent: func(r *historyRepo) { r.git("update-ref", "-d", "refs/ralph/snapshots/task-1-pre") },
			want:  "the agent deleted snapshot task-1-pre; the harness put it back",
		},
		{
			name:  "snapshot ref moved",
			agent: func(r *historyRepo) { r.git("update-ref", "refs/ralph/snapshots/task-1-pre", "HEAD~2") },
			want:  "the agent moved snapshot task-1-pre; the harness put it back",
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if rep.Refs[0].Kept != "refs/ralph/agent/k/ralph/snapshots/task-1-pre" {
					t.Errorf("the agent's value is kept at %q", rep.Refs[0].Kept)
				}
			},
		},
		{
			name: "snapshot ref created by hand",
			agent: func(r *historyRepo) {
				r.git("update-ref", "refs/ralph/snapshots/task-1-post", "HEAD")
				r.git("update-ref", "refs/ralph/tip", "HEAD")
			},
			want: "the agent created snapshot task-1-post, moved refs/ralph/tip; the harness put it back",
		},
		{
			name: "new commits and a snapshot saved the ralph way",
			agent: func(r *historyRepo) {
				r.write("feature.txt", "the agent's work\n")
				r.commit("feature")
				snaps, err := snapshot.Open(context.Background(), r.dir, nil)
				if err != nil {
					r.t.Fatal(err)
				}
				if _, err := snaps.Save(context.Background(), "manual-1767225600", "the agent's own"); err != nil {
					r.t.Fatal(err)
				}
				r.write("app.txt", "uncommitted\n")
			},
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if got := r.read("app.txt"); got != "uncommitted\n" {
					t.Errorf("the agent's uncommitted change was touched: %q", got)
				}
				if got := r.git("rev-list", "--count", "main"); got != "4" {
					t.Errorf("main has %s commits, want 4", got)
				}
			},
		},
		{
			name: "agent's own commit reset away, the start kept",
			agent: func(r *historyRepo) {
				r.write("feature.txt", "the agent's work\n")
				r.commit("feature")
				r.git("reset", "-q", "--hard", "HEAD~1")
			},
		},
		{
			name: "uncommitted work carried onto the restored branch",
			agent: func(r *historyRepo) {
				r.git("reset", "-q", "--hard", "HEAD~2")
				r.write("notes.txt", "notes\nthe agent's note\n")
				r.write("new.txt", "a new file\n")
			},
			want: "the agent reset main, dropping 2 commits; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip)",
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if !rep.Carried || rep.Worktree == "" {
					t.Errorf("carried %v, worktree %q; want the agent's work carried and kept", rep.Carried, rep.Worktree)
				}
				if got := r.read("notes.txt") + r.read("new.txt") + r.read("u1.txt"); got != "notes\nthe agent's note\na new file\nthe user's first commit\n" {
					t.Errorf("working tree after the guard: %q", got)
				}
				if got := r.git("status", "--porcelain", "--", "notes.txt", "new.txt"); got != "M notes.txt\n?? new.txt" {
					t.Errorf("git status after the guard: %q", got)
				}
			},
		},
		{
			name: "uncommitted work on a file the user's commits changed",
			agent: func(r *historyRepo) {
				r.git("reset", "-q", "--hard", "HEAD~2")
				r.write("app.txt", "base\nthe agent's line\n")
			},
			want: "the agent reset main, dropping 2 commits; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip; its uncommitted work kept at refs/ralph/agent/k/worktree)",
			check: func(t *testing.T, r *historyRepo, rep guard.HistoryReport) {
				if got := r.read("app.txt"); got != "base\nu1\n" {
					t.Errorf("app.txt after the guard: %q, want the user's", got)
				}
				if got := r.git("show", "refs/ralph/agent/k/worktree:app.txt"); got != "base\nthe agent's line" {
					t.Errorf("the agent's app.txt kept: %q", got)
				}
				if !strings.Contains(rep.Feedback(), "git diff HEAD refs/ralph/agent/k/worktree") {
					t.Errorf("the feedback does not say where the agent's work is:\n%s", rep.Feedback())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			r := newHistoryRepo(t)
			origin, mark := r.start()
			head, snaps := r.git("rev-parse", "main"), r.snapshots()
			tt.agent(r)
			rep, next, err := guard.History(ctx, r.dir, origin, mark, "k")
			if err != nil {
				t.Fatal(err)
			}
			// The next check, from the mark History returned, finds nothing.
			if again, _, err := guard.History(ctx, r.dir, origin, next, "k2"); err != nil || again.Changed() {
				t.Errorf("a second check reports %q, %v", again, err)
			}
			if tt.want == "" {
				if rep.Changed() {
					t.Fatalf("reported %q for a harmless change", rep)
				}
			} else {
				if got := rep.String(); got != tt.want {
					t.Errorf("report:\n got %s\nwant %s", got, tt.want)
				}
				if len(rep.Problems) > 0 {
					t.Errorf("problems: %v", rep.Problems)
				}
				// Everything is back: the branch, HEAD on it, the snapshots.
				if got := r.git("rev-parse", "main"); got != head {
					t.Errorf("main is at %s, want %s", got, head)
				}
				if got := r.git("symbolic-ref", "HEAD"); got != "refs/heads/main" {
					t.Errorf("HEAD is %s, want refs/heads/main", got)
				}
				if got := r.snapshots(); !slices.Equal(got, snaps) {
					t.Errorf("snapshots %v, want %v (refs/ralph/agent/ must not list)", got, snaps)
				}
				if got := r.git("status", "--porcelain", "--untracked-files=no"); got != "" && !rep.Carried {
					t.Errorf("the working tree is not the branch's: %q", got)
				}
				if !strings.Contains(rep.Feedback(), "You may not reset, rebase or amend") {
					t.Errorf("the feedback does not say what the agent may not do:\n%s", rep.Feedback())
				}
			}
			if tt.check != nil {
				tt.check(t, r, rep)
			}
		})
	}
}

// ralph's own files stay as the harness has them, even where the user's
// branch tracks them and the restored commits change them.
func TestHistoryLeavesRalphFiles(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	r.write(".ralph/plan.tsx", "the user's committed plan\n")
	r.write(".ralph/status.txt", "running\n")
	r.commit("the user commits .ralph/")
	origin, mark := r.start()
	r.git("reset", "-q", "--hard", "HEAD~1")
	// The harness writes its files as the iteration goes.
	r.write(".ralph/status.txt", "complete\n")
	r.write(".ralph/plan.tsx", "the plan of this task\n")
	r.write("work.txt", "the agent's work\n")
	rep, _, err := guard.History(ctx, r.dir, origin, mark, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 || !rep.Carried {
		t.Errorf("problems %v, carried %v; want none and the agent's work carried", rep.Problems, rep.Carried)
	}
	if got := r.read(".ralph/status.txt") + r.read(".ralph/plan.tsx") + r.read("work.txt") + r.read("u2.txt"); got != "complete\nthe plan of this task\nthe agent's work\nthe user's second commit\n" {
		t.Errorf("files after the guard: %q", got)
	}
	if got := r.git("log", "-1", "--format=%s"); got != "the user commits .ralph/" {
		t.Errorf("HEAD is at %q", got)
	}
}

// The mark, not the start, is where the branch goes back to: the agent's
// commits of earlier iterations stay.
func TestHistoryKeepsEarlierAgentCommits(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	origin, err := guard.ReadOrigin(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	r.write("feature.txt", "iteration 1\n")
	r.commit("the agent's iteration 1")
	mark, err := guard.ReadHistoryMark(ctx, r.dir, origin)
	if err != nil {
		t.Fatal(err)
	}
	r.git("reset", "-q", "--hard", "HEAD~3")
	rep, _, err := guard.History(ctx, r.dir, origin, mark, "k")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dropped != 3 || rep.Rewrote {
		t.Errorf("dropped %d, rewrote %v; want 3 dropped by a reset", rep.Dropped, rep.Rewrote)
	}
	if got := r.git("log", "-1", "--format=%s", "main"); got != "the agent's iteration 1" {
		t.Errorf("main is at %q, want the agent's iteration 1 commit", got)
	}
	if got := r.read("feature.txt"); got != "iteration 1\n" {
		t.Errorf("feature.txt: %q", got)
	}
}

// In a worktree run the guarded branch is the task's own, checked out in a
// linked worktree.
func TestHistoryLinkedWorktree(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	wt := filepath.Join(r.dir, ".ralph", "worktrees", "task-1")
	r.git("worktree", "add", "-q", "-b", "ralph/task/1", wt, "HEAD")
	w := &historyRepo{t: t, dir: wt}
	origin, err := guard.ReadOrigin(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	mark, err := guard.ReadHistoryMark(ctx, wt, origin)
	if err != nil {
		t.Fatal(err)
	}
	w.git("reset", "-q", "--hard", "HEAD~2")
	rep, _, err := guard.History(ctx, wt, origin, mark, "k")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.String(), "the agent reset ralph/task/1, dropping 2 commits; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip)"; got != want {
		t.Errorf("report:\n got %s\nwant %s", got, want)
	}
	if got := w.read("u2.txt"); got != "the user's second commit\n" {
		t.Errorf("u2.txt in the worktree: %q", got)
	}
	if got, want := w.git("rev-parse", "HEAD"), r.git("rev-parse", "main"); got != want {
		t.Errorf("the task's branch is at %s, want %s", got, want)
	}
}

// A task that started on a detached HEAD guards HEAD itself: moving it on
// is fine, moving it off the start is put back.
func TestHistoryDetachedOrigin(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	r.git("checkout", "-q", "--detach", "HEAD")
	origin, err := guard.ReadOrigin(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if origin.Branch != "" {
		t.Fatalf("origin branch %q, want none", origin.Branch)
	}
	mark, err := guard.ReadHistoryMark(ctx, r.dir, origin)
	if err != nil {
		t.Fatal(err)
	}
	start := r.git("rev-parse", "HEAD")
	r.write("feature.txt", "the agent's work\n")
	r.commit("feature")
	if rep, _, err := guard.History(ctx, r.dir, origin, mark, "k"); err != nil || rep.Changed() {
		t.Fatalf("a new commit on the detached HEAD: %q, %v", rep, err)
	}
	if mark, err = guard.ReadHistoryMark(ctx, r.dir, origin); err != nil {
		t.Fatal(err)
	}
	tip := r.git("rev-parse", "HEAD")
	r.git("checkout", "-q", "--detach", start+"~1")
	rep, _, err := guard.History(ctx, r.dir, origin, mark, "k")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.String(), "the agent reset HEAD, dropping 2 commits; the harness put it back (agent's tip kept at refs/ralph/agent/k/tip)"; got != want {
		t.Errorf("report:\n got %s\nwant %s", got, want)
	}
	if got := r.git("rev-parse", "HEAD"); got != tip {
		t.Errorf("HEAD is at %s, want %s", got, tip)
	}
	if _, err := git.Line(ctx, r.dir, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Errorf("HEAD is on a branch, want it detached as the task started")
	}
}

package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
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
	"testing"

	"github.com/google/go-cmp/cmp"
	"time"

	"go.uber.org/goleak"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// TestMain gives every test a machine with no git identity and no global or
// system configuration: the package must not depend on either.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "snapshot-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	os.RemoveAll(home)
	if code == 0 {
		// No test may leave a goroutine running (goleak.VerifyTestMain,
		// with the binary's clean-up before the check).
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// userGit runs git as the user would, with an identity of its own given on
// the command line.
func userGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "user.name=Test User", "-c", "user.email=user@example.invalid", "-c", "init.defaultBranch=main"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// tree reads the working tree (without .git): every file with its mode and
// content, every symlink with its target, every directory.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			m[rel+"/"] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "link:" + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("%v:%s", info.Mode().Perm()&0o100, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// without returns m less the paths matching any of the prefixes.
func without(m map[string]string, prefixes ...string) map[string]string {
	out := map[string]string{}
outer:
	for k, v := range m {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				continue outer
			}
		}
		out[k] = v
	}
	return out
}

func diffTrees(t *testing.T, label string, got, want map[string]string) {
	t.Helper()
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			t.Errorf("%s: %s missing (want %q)", label, k, w)
		case !wok:
			t.Errorf("%s: %s present (%q), should not be", label, k, g)
		case g != w:
			t.Errorf("%s: %s = %q, want %q", label, k, g, w)
		}
	}
}

// userState is everything of the user's that snapshots must never change.
func userState(t *testing.T, dir string) map[string]string {
	t.Helper()
	idx, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	indexHash := "absent"
	if err == nil {
		indexHash = fmt.Sprintf("%x", sha256.Sum256(idx))
	}
	head, _ := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
	var refs []string
	for line := range strings.SplitSeq(userGit(t, dir, "for-each-ref", "--format=%(refname) %(objectname)"), "\n") {
		if !strings.HasPrefix(line, "refs/ralph/") {
			refs = append(refs, line)
		}
	}
	return map[string]string{
		"index bytes":   indexHash,
		"HEAD":          string(head),
		"refs":          strings.Join(refs, "\n"),
		"ls-files":      userGit(t, dir, "ls-files", "--stage"),
		"diff --cached": userGit(t, dir, "diff", "--cached"),
		"tags":          userGit(t, dir, "tag", "--list"),
		"stash":         userGit(t, dir, "stash", "list"),
	}
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	userGit(t, dir, "init", "-q")
	return dir
}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// populate builds a project with history, untracked files, ignored files,
// ralph's private files, a staged change, a tag and a stash entry.
func populate(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, ".gitignore", "build/\n*.tmp\n")
	write(t, dir, "README.md", "# demo\n")
	write(t, dir, "src/app.tsx", "export const App = () => null\n")
	write(t, dir, "src/sections/Hero.tsx", "hero v1\n")
	write(t, dir, "docs/old/guide.md", "guide\n")
	write(t, dir, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/app.tsx", filepath.Join(dir, "app-link")); err != nil {
		t.Fatal(err)
	}
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "first")
	userGit(t, dir, "tag", "v1.0")
	write(t, dir, "stashed.txt", "stash me\n")
	userGit(t, dir, "add", "stashed.txt")
	userGit(t, dir, "stash", "-q")
	// Working-tree state that is not committed.
	write(t, dir, "src/sections/Hero.tsx", "hero v2 (staged)\n")
	userGit(t, dir, "add", "src/sections/Hero.tsx")
	write(t, dir, "src/sections/Hero.tsx", "hero v3 (unstaged)\n")
	write(t, dir, "notes/untracked.md", "untracked\n")
	write(t, dir, ".ralph/task-counter.txt", "1\n")
	write(t, dir, ".ralph/plan.tsx", "<App/>\n")
	// Ignored and private files.
	write(t, dir, "build/out.bin", "ignored build output\n")
	write(t, dir, "scratch.tmp", "ignored\n")
	write(t, dir, ".ralph/ralph.db", "db v1")
	write(t, dir, ".ralph/ralph.db-wal", "wal v1")
	write(t, dir, ".ralph/ralph.lock", "123")
	write(t, dir, ".ralph/request.json", `{"message": "v1"}`)
	write(t, dir, ".ralph/logs/run-1.log", "log v1")
}

// private lists what snapshots leave out in populate's project.
var private = []string{"build/", "scratch.tmp", ".ralph/ralph.", ".ralph/logs/", ".ralph/request.json"}

func snapshotFiles(t *testing.T, dir string, s Snapshot) []string {
	t.Helper()
	return strings.Fields(userGit(t, dir, "ls-tree", "-r", "--name-only", s.Commit))
}

func TestSaveRollbackRestoresTreeExactly(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	populate(t, dir)
	r := open(t, dir)
	before := userState(t, dir)

	saved := tree(t, dir)
	pre, err := r.Save(ctx, TaskPre(1), "before task 1")
	if err != nil {
		t.Fatal(err)
	}
	if pre.Name != "task-1-pre" || pre.Kind != KindTaskPre || pre.Task != 1 || len(pre.Commit) < 40 {
		t.Errorf("Save returned %+v", pre)
	}
	files := snapshotFiles(t, dir, pre)
	for _, want := range []string{".gitignore", "README.md", "app-link", "run.sh", "src/sections/Hero.tsx", "notes/untracked.md", ".ralph/task-counter.txt", ".ralph/plan.tsx"} {
		if !slices.Contains(files, want) {
			t.Errorf("snapshot lacks %s; has %v", want, files)
		}
	}
	for _, f := range files {
		for _, p := range private {
			if strings.HasPrefix(f, p) {
				t.Errorf("snapshot holds private or ignored file %s", f)
			}
		}
	}
	diffTrees(t, "user state after save", userState(t, dir), before)

	// Edit, add and delete files, and move the run history on.
	write(t, dir, "README.md", "# demo, edited\n")
	write(t, dir, "src/new/Feature.tsx", "new feature\n")
	write(t, dir, "added.txt", "added\n")
	remove(t, dir, "docs")
	remove(t, dir, "src/app.tsx")
	remove(t, dir, "notes")
	write(t, dir, ".ralph/task-counter.txt", "2\n")
	write(t, dir, ".ralph/summary.md", "did things\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".ralph/ralph.db", "db v2")
	write(t, dir, ".ralph/logs/run-2.log", "log v2")
	write(t, dir, "build/more.bin", "more ignored output\n")
	edited := tree(t, dir)

	undo, err := r.Rollback(ctx, pre.Name)
	if err != nil {
		t.Fatal(err)
	}
	if undo.Kind != KindRollback || !strings.HasPrefix(undo.Name, "rollback-") {
		t.Errorf("undo snapshot = %+v", undo)
	}
	got := tree(t, dir)
	diffTrees(t, "after rollback", without(got, private...), without(saved, private...))
	// Ignored and private files are the edited ones, untouched.
	for _, p := range []string{".ralph/ralph.db", ".ralph/ralph.db-wal", ".ralph/ralph.lock", ".ralph/logs/run-1.log", ".ralph/logs/run-2.log", "build/out.bin", "build/more.bin", "scratch.tmp"} {
		if got[p] != edited[p] {
			t.Errorf("after rollback %s = %q, want it kept as %q", p, got[p], edited[p])
		}
	}
	if got[".ralph/task-counter.txt"] != saved[".ralph/task-counter.txt"] {
		t.Errorf("task counter not restored: %q", got[".ralph/task-counter.txt"])
	}
	diffTrees(t, "user state after rollback", userState(t, dir), before)

	// Undo the rollback: back to the edited tree.
	undo2, err := r.Rollback(ctx, undo.Name)
	if err != nil {
		t.Fatal(err)
	}
	if undo2.Name == undo.Name {
		t.Errorf("second rollback reused the name %s", undo.Name)
	}
	diffTrees(t, "after undoing the rollback", tree(t, dir), edited)
	diffTrees(t, "user state after undo", userState(t, dir), before)

	// The snapshot chain keeps history: each commit's parent is the previous.
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if want := []string{pre.Name, undo.Name, undo2.Name}; !slices.Equal(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}
	parents := strings.Fields(userGit(t, dir, "rev-list", "--first-parent", undo2.Commit))
	if want := []string{undo2.Commit, undo.Commit, pre.Commit}; !slices.Equal(parents, want) {
		t.Errorf("history = %v, want %v", parents, want)
	}
	author := userGit(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", pre.Commit)
	if strings.TrimSpace(author) != "ralph <ralph@localhost>|ralph <ralph@localhost>" {
		t.Errorf("snapshot author/committer = %q", author)
	}
}

func TestNoCommits(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, ".ralph/task-counter.txt", "1\n")
	r := open(t, dir)
	before := userState(t, dir)
	saved := tree(t, dir)
	s, err := r.Save(ctx, Manual(time.Now()), "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "b/c.txt", "new\n")
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), saved)
	diffTrees(t, "user state", userState(t, dir), before)
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the user's index was created: %v", err)
	}
}

func TestEmptyRepository(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	r := open(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "x/y.txt", "y\n")
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), map[string]string{})
}

func TestDetachedHEAD(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "one\n")
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "one")
	write(t, dir, "a.txt", "two\n")
	userGit(t, dir, "commit", "-q", "-am", "two")
	userGit(t, dir, "checkout", "-q", "--detach", "HEAD~1")
	before := userState(t, dir)
	r := open(t, dir)
	write(t, dir, "b.txt", "b\n")
	saved := tree(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "edited\n")
	remove(t, dir, "b.txt")
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), saved)
	diffTrees(t, "user state", userState(t, dir), before)
}

func TestRollbackRefusesNonSnapshots(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	populate(t, dir)
	r := open(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "README.md", "edited\n")
	edited := tree(t, dir)
	for _, name := range []string{"..", "task-1-pre/..", "-f", "--hard", "task 1 pre", "main", "HEAD", "v1.0", "refs/heads/main", "refs/ralph/snapshots/task-1-pre", "task-9-pre", "rollback-1"} {
		_, err := r.Rollback(ctx, name)
		var ue *UnknownSnapshotError
		if !errors.As(err, &ue) || !errors.Is(err, ErrNoSuchSnapshot) {
			t.Errorf("Rollback(%q) = %v, want an UnknownSnapshotError", name, err)
			continue
		}
		if !slices.Equal(ue.Valid, []string{s.Name}) || !strings.Contains(err.Error(), "valid snapshots: task-1-pre") {
			t.Errorf("Rollback(%q): %v; valid = %v", name, err, ue.Valid)
		}
		if _, err := r.Diff(ctx, name); !errors.Is(err, ErrNoSuchSnapshot) {
			t.Errorf("Diff(%q) = %v", name, err)
		}
		if _, err := r.ReadFile(ctx, name, "README.md"); !errors.Is(err, ErrNoSuchSnapshot) {
			t.Errorf("ReadFile(%q) = %v", name, err)
		}
	}
	diffTrees(t, "after refused rollbacks", tree(t, dir), edited)
	if list, _ := r.List(ctx); len(list) != 1 {
		t.Errorf("refused rollbacks created snapshots: %v", list)
	}
	for _, name := range []string{"..", "-f", "main", "a b"} {
		if _, err := r.Save(ctx, name, ""); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Save(%q) = %v, want ErrInvalidName", name, err)
		}
	}
}

func TestUnreadableFile(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "ok.txt", "ok\n")
	r := open(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "secret.txt", "secret\n")
	write(t, dir, "ok.txt", "edited\n")
	secret := filepath.Join(dir, "secret.txt")
	if err := os.Chmod(secret, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(secret, 0o644) })
	if f, err := os.Open(secret); err == nil {
		f.Close()
		if os.Geteuid() == 0 {
			t.Log("running as root: a mode-000 file is still readable, so git can snapshot it; the unreadable-file case cannot be exercised here")
			t.SkipNow()
		}
		t.Fatal("a mode-000 file is readable by a non-root user")
	}
	_, err = r.Save(ctx, TaskPost(1), "")
	if err == nil || !strings.Contains(err.Error(), "secret.txt") {
		t.Errorf("Save with an unreadable file = %v, want an error naming secret.txt", err)
	}
	edited := tree(t, dir)
	if _, err := r.Rollback(ctx, s.Name); err == nil {
		t.Error("Rollback with an unreadable file succeeded; it must refuse before touching anything")
	}
	diffTrees(t, "after refused rollback", tree(t, dir), edited)
	if list, _ := r.List(ctx); len(list) != 1 {
		t.Errorf("failed operations left snapshots: %v", list)
	}
}

func TestUserIndexLockedByAnotherProcess(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	populate(t, dir)
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	saved := tree(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "README.md", "edited\n")
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), saved)
}

func TestSaveNames(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	r := open(t, dir)
	r.now = func() time.Time { return time.Unix(1708123456, 0) }
	m1, err := r.Save(ctx, Manual(r.now()), "one")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := r.Save(ctx, Manual(r.now()), "two")
	if err != nil {
		t.Fatal(err)
	}
	if m1.Name != "manual-1708123456" || m2.Name != "manual-1708123456-2" {
		t.Errorf("names = %s, %s", m1.Name, m2.Name)
	}
	if _, err := r.Save(ctx, TaskPre(1), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, TaskPre(1), ""); !errors.Is(err, ErrSnapshotExists) {
		t.Errorf("second task-1-pre: %v, want ErrSnapshotExists", err)
	}
	if ok, err := r.Exists(ctx, "task-1-pre"); !ok || err != nil {
		t.Errorf("Exists(task-1-pre) = %v, %v", ok, err)
	}
	if ok, err := r.Exists(ctx, "task-1-post"); ok || err != nil {
		t.Errorf("Exists(task-1-post) = %v, %v", ok, err)
	}
	got, err := r.Resolve(ctx, m2.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message != "two" || got.Commit != m2.Commit || got.Kind != KindManual || !got.Time.Equal(m2.Time) {
		t.Errorf("Resolve = %+v, want %+v", got, m2)
	}
}

func TestConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	populate(t, dir)
	repos := []*Repo{open(t, dir), open(t, dir)}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := repos[i%2].Save(ctx, StallRecovery(i+1), "")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	list, err := repos[0].List(ctx)
	if err != nil || len(list) != 8 {
		t.Errorf("List = %d snapshots, %v", len(list), err)
	}
}

func TestDiffStatusReadFile(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	populate(t, dir)
	r := open(t, dir)

	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 0 || st.Current != "" || st.Latest != "" || st.Changes == 0 || !st.LastTime.IsZero() {
		t.Errorf("status before any snapshot = %+v", st)
	}

	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	st, err = r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != s.Name || st.Latest != s.Name || st.Changes != 0 || st.Count != 1 || !st.LastTime.Equal(s.Time) {
		t.Errorf("status after save = %+v", st)
	}

	write(t, dir, "README.md", "edited\n")
	write(t, dir, "new/file.txt", "new\n")
	remove(t, dir, "src/app.tsx")
	write(t, dir, ".ralph/ralph.db", "db changes never show")
	write(t, dir, "build/x", "ignored changes never show")
	changes, err := r.Diff(ctx, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{"README.md", Modified}, {"new/file.txt", Added}, {"src/app.tsx", Deleted}}
	if !slices.Equal(changes, want) {
		t.Errorf("Diff = %v, want %v", changes, want)
	}
	st, err = r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != "" || st.Changes != 3 {
		t.Errorf("status after edits = %+v", st)
	}

	b, err := r.ReadFile(ctx, s.Name, "README.md")
	if err != nil || string(b) != "# demo\n" {
		t.Errorf("ReadFile(README.md) = %q, %v", b, err)
	}
	b, err = r.ReadFile(ctx, s.Name, "src/sections/Hero.tsx")
	if err != nil || string(b) != "hero v3 (unstaged)\n" {
		t.Errorf("ReadFile(Hero.tsx) = %q, %v", b, err)
	}
	if _, err := r.ReadFile(ctx, s.Name, "new/file.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a file the snapshot lacks = %v, want fs.ErrNotExist", err)
	}
	if _, err := r.ReadFile(ctx, s.Name, "src"); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	for _, p := range []string{"../etc/passwd", "/etc/passwd", "", ".", "a/../b"} {
		if _, err := r.ReadFile(ctx, s.Name, p); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("ReadFile(%q) = %v, want fs.ErrInvalid", p, err)
		}
	}
}

func TestTrackedIgnoredAndCommittedPrivateFiles(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, ".gitignore", "*.gen\n")
	write(t, dir, "kept.gen", "force-added\n")
	write(t, dir, ".ralph/ralph.db", "committed by mistake")
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "add", "-f", "kept.gen")
	userGit(t, dir, "commit", "-q", "-m", "x")
	r := open(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	files := snapshotFiles(t, dir, s)
	if !slices.Contains(files, "kept.gen") {
		t.Errorf("snapshot lacks the tracked, ignored file kept.gen: %v", files)
	}
	if slices.Contains(files, ".ralph/ralph.db") {
		t.Errorf("snapshot holds .ralph/ralph.db: %v", files)
	}
	write(t, dir, ".ralph/ralph.db", "newer")
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".ralph/ralph.db")); string(b) != "newer" {
		t.Errorf("rollback rewound .ralph/ralph.db to %q", b)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, t.TempDir(), nil); !errors.Is(err, ErrNotGitRepo) {
		t.Errorf("Open(plain dir) = %v, want ErrNotGitRepo", err)
	}
	bare := t.TempDir()
	userGit(t, bare, "init", "-q", "--bare")
	if _, err := Open(ctx, bare, nil); !errors.Is(err, ErrNotGitRepo) {
		t.Errorf("Open(bare repo) = %v, want ErrNotGitRepo", err)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "missing"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing dir) = %v, want fs.ErrNotExist", err)
	}
	dir := newRepo(t)
	write(t, dir, "sub/a.txt", "a")
	r, err := Open(ctx, filepath.Join(dir, "sub"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(dir); r.Root() != real && r.Root() != dir {
		t.Errorf("Root() = %s, want %s", r.Root(), dir)
	}
}

// savedRepo makes a repository holding files (path, content pairs) and
// saves snapshot TaskPre(1) of it, returning the tree it saved.
func savedRepo(t *testing.T, files ...string) (dir string, r *Repo, saved map[string]string, s Snapshot) {
	t.Helper()
	dir = newRepo(t)
	for i := 0; i+1 < len(files); i += 2 {
		write(t, dir, files[i], files[i+1])
	}
	r = open(t, dir)
	saved = tree(t, dir)
	s, err := r.Save(context.Background(), TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	return dir, r, saved, s
}

func TestRollbackSwapsFilesAndDirectories(t *testing.T) {
	ctx := context.Background()
	dir, r, saved, s := savedRepo(t, "x", "file x\n", "d/f", "file d/f\n", "keep/k", "k\n")
	remove(t, dir, "x")
	write(t, dir, "x/y", "now a directory\n")
	remove(t, dir, "d")
	write(t, dir, "d", "now a file\n")
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), saved)
}

func TestRollbackSavesIgnoredFilesInTheWay(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, ".gitignore", "*.log\n")
	write(t, dir, "x", "file x\n")
	write(t, dir, "report.txt", "report at snapshot\n")
	write(t, dir, "lib", "file lib\n")
	r := open(t, dir)
	saved := tree(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	// x becomes a directory holding only an ignored file; report.txt
	// becomes ignored with new content; lib becomes a directory with an
	// ignored file whose place the snapshot's file lib needs.
	remove(t, dir, "x")
	write(t, dir, "x/keep.log", "ignored log\n")
	write(t, dir, ".git/info/exclude", "report.txt\n")
	write(t, dir, "report.txt", "ignored report, newer\n")
	remove(t, dir, "lib")
	write(t, dir, "lib/deep/trace.log", "ignored trace\n")
	edited := tree(t, dir)

	undo, err := r.Rollback(ctx, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), saved)
	files := snapshotFiles(t, dir, undo)
	for _, want := range []string{"x/keep.log", "report.txt", "lib/deep/trace.log"} {
		if !slices.Contains(files, want) {
			t.Errorf("undo snapshot lacks the replaced ignored file %s: %v", want, files)
		}
	}
	if _, err := r.Rollback(ctx, undo.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after undo", tree(t, dir), edited)
}

func TestRollbackRefusesToReplacePrivateFiles(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, ".ralph", "once a file\n")
	r := open(t, dir)
	s, err := r.Save(ctx, TaskPre(1), "")
	if err != nil {
		t.Fatal(err)
	}
	remove(t, dir, ".ralph")
	write(t, dir, ".ralph/ralph.db", "the run history")
	write(t, dir, ".ralph/task-counter.txt", "2\n")
	before := tree(t, dir)
	_, err = r.Rollback(ctx, s.Name)
	if err == nil || !strings.Contains(err.Error(), ".ralph/ralph.db") {
		t.Errorf("Rollback = %v, want a refusal naming .ralph/ralph.db", err)
	}
	diffTrees(t, "after refused rollback", tree(t, dir), before)
}

func TestStaleLockOnPrivateIndex(t *testing.T) {
	ctx := context.Background()
	dir, r, _, _ := savedRepo(t, "a.txt", "a\n")
	lock := filepath.Join(dir, ".git", "ralph", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "b\n")
	if _, err := r.Save(ctx, TaskPost(1), ""); err != nil {
		t.Fatalf("Save with a stale private index lock: %v", err)
	}
}

// TestPrivateFilesNeverHashed covers the layouts ralph meets: the engine's
// .ralph/.gitignore listing the private files, no .gitignore at all, and a
// project that ignores .ralph/ altogether. In none of them does a save fail,
// hold a private file, or write one into the object store.
func TestPrivateFilesNeverHashed(t *testing.T) {
	for _, tc := range []struct {
		name, gitignore, ralphGitignore string
		wantCounter                     bool
	}{
		{"ralph gitignore", "", "ralph.db*\nralph.lock\nlogs/\n", true},
		{"no gitignore", "", "", true},
		{"project ignores .ralph", ".ralph/\n", "", false},
		{"project ignores the db", "*.db\n", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			write(t, dir, "a.txt", "a\n")
			if tc.gitignore != "" {
				write(t, dir, ".gitignore", tc.gitignore)
			}
			if tc.ralphGitignore != "" {
				write(t, dir, ".ralph/.gitignore", tc.ralphGitignore)
			}
			write(t, dir, ".ralph/task-counter.txt", "1\n")
			write(t, dir, ".ralph/ralph.db", "a unique database "+tc.name)
			write(t, dir, ".ralph/ralph.db-wal", "a unique wal "+tc.name)
			write(t, dir, ".ralph/ralph.lock", "a unique lock "+tc.name)
			write(t, dir, ".ralph/logs/run.log", "a unique log "+tc.name)
			r := open(t, dir)
			s, err := r.Save(ctx, TaskPre(1), "")
			if err != nil {
				t.Fatal(err)
			}
			files := snapshotFiles(t, dir, s)
			if got := slices.Contains(files, ".ralph/task-counter.txt"); got != tc.wantCounter {
				t.Errorf("snapshot holds .ralph/task-counter.txt: %v, want %v (%v)", got, tc.wantCounter, files)
			}
			for _, p := range []string{".ralph/ralph.db", ".ralph/ralph.db-wal", ".ralph/ralph.lock", ".ralph/logs/run.log"} {
				if slices.Contains(files, p) {
					t.Errorf("snapshot holds %s", p)
				}
				oid := strings.TrimSpace(userGit(t, dir, "hash-object", p))
				if err := exec.Command("git", "-C", dir, "cat-file", "-e", oid).Run(); err == nil {
					t.Errorf("%s was written to the object store", p)
				}
			}
			write(t, dir, ".ralph/ralph.db", "newer")
			write(t, dir, "a.txt", "b\n")
			if _, err := r.Rollback(ctx, s.Name); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ".ralph/ralph.db")); string(b) != "newer" {
				t.Errorf("rollback rewound the database to %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a\n" {
				t.Errorf("a.txt = %q after rollback", b)
			}
		})
	}
}

func TestSnapshotChainAcrossRepos(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	a, b := open(t, dir), open(t, dir)
	var want []string
	for i, r := range []*Repo{a, a, b, a, b, b, a} {
		write(t, dir, "a.txt", strconv.Itoa(i))
		s, err := r.Save(ctx, StallRecovery(i+1), "")
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{s.Commit}, want...)
	}
	got := strings.Fields(userGit(t, dir, "rev-list", "--first-parent", TipRef))
	if !slices.Equal(got, want) {
		t.Errorf("the snapshot chain has gaps:\ngot  %v\nwant %v", got, want)
	}
}

// TestRollbackReplacesEmptyDirectories checks that empty directories where
// the snapshot has files give way, and that files unchanged since the
// snapshot are not rewritten.
func TestRollbackReplacesEmptyDirectories(t *testing.T) {
	ctx := context.Background()
	dir, r, saved, s := savedRepo(t, "x", "file x\n", "e", "file e\n", "same/s", "unchanged\n")
	before, err := os.Stat(filepath.Join(dir, "same", "s"))
	if err != nil {
		t.Fatal(err)
	}
	remove(t, dir, "x")
	remove(t, dir, "e")
	for _, d := range []string{"x", "e/f/g"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Rollback(ctx, s.Name); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "after rollback", tree(t, dir), saved)
	after, err := os.Stat(filepath.Join(dir, "same", "s"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("rollback rewrote a file that had not changed")
	}
}

// TestSaveSeesNewDirectories checks that files in directories created since
// the last save, and new files in known directories, are in the next
// snapshot, however soon after it they are written.
func TestSaveSeesNewDirectories(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "src/App.tsx", "app\n")
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "start")
	r := open(t, dir)
	if _, err := r.Save(ctx, TaskPre(1), ""); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "src/sections/Features.tsx", "features\n")
	write(t, dir, "src/new.tsx", "new\n")
	s, err := r.Save(ctx, StallRecovery(1), "")
	if err != nil {
		t.Fatal(err)
	}
	files := snapshotFiles(t, dir, s)
	for _, want := range []string{"src/sections/Features.tsx", "src/new.tsx", "src/App.tsx"} {
		if !slices.Contains(files, want) {
			t.Errorf("snapshot lacks %s: %v", want, files)
		}
	}
}

// The worktrees of worktree tasks and parallel specs under
// .ralph/worktrees are ralph's private files: no snapshot holds them, with
// or without a .ralph/.gitignore that lists them, and a rollback leaves
// them alone.
func TestWorktreesAreNotSnapshotted(t *testing.T) {
	for _, ignored := range []bool{true, false} {
		t.Run(fmt.Sprintf("ignored=%v", ignored), func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			write(t, dir, "README.md", "# demo\n")
			if ignored {
				write(t, dir, ".ralph/.gitignore", strings.Join(workspace.Private, "\n")+"\n")
			}
			userGit(t, dir, "add", "-A")
			userGit(t, dir, "commit", "-q", "-m", "first")
			write(t, dir, ".ralph/worktrees/task-1/.git", "gitdir: elsewhere\n")
			write(t, dir, ".ralph/worktrees/task-1/src/a.go", "package a\n")
			r := open(t, dir)
			pre, err := r.Save(ctx, TaskPre(1), "before task 1")
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, ".ralph/worktrees/task-1/src/a.go", "package a // edited\n")
			write(t, dir, "README.md", "# demo, edited\n")
			post, err := r.Save(ctx, TaskPost(1), "after task 1")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []Snapshot{pre, post} {
				for _, f := range snapshotFiles(t, dir, s) {
					if strings.HasPrefix(f, ".ralph/worktrees") {
						t.Errorf("snapshot %s holds %s", s.Name, f)
					}
				}
			}
			if _, err := r.Rollback(ctx, pre.Name); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, ".ralph/worktrees/task-1/src/a.go")); string(got) != "package a // edited\n" {
				t.Errorf("rollback changed a worktree's file: %q", got)
			}
		})
	}
}

// Once more than maxLooseRefs snapshot refs are loose files, a save packs
// them: the guard's check of every agent run stats each loose ref, and a
// long-lived workspace holds hundreds. Every snapshot keeps its name and
// commit, and the newest still rolls back.
func TestManySnapshotsArePacked(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "app.txt", "v0\n")
	r := open(t, dir)
	saved := map[string]string{}
	for i := 1; i <= maxLooseRefs+6; i++ {
		write(t, dir, "app.txt", fmt.Sprintf("v%d\n", i))
		s, err := r.Save(ctx, TaskPre(i), "task")
		if err != nil {
			t.Fatal(err)
		}
		saved[s.Name] = s.Commit
	}
	loose, err := os.ReadDir(filepath.Join(dir, ".git", "refs", "ralph", "snapshots"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(loose) > maxLooseRefs {
		t.Errorf("%d snapshot refs are loose files after %d saves, want at most %d", len(loose), len(saved), maxLooseRefs)
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.Name] = s.Commit
	}
	if diff := cmp.Diff(saved, got); diff != "" {
		t.Errorf("snapshots after packing (-saved +listed):\n%s", diff)
	}
	write(t, dir, "app.txt", "changed after\n")
	if _, err := r.Rollback(ctx, TaskPre(maxLooseRefs+6)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "app.txt")); string(b) != fmt.Sprintf("v%d\n", maxLooseRefs+6) {
		t.Errorf("app.txt after rollback = %q", b)
	}
}

// The private index keeps git's untracked cache, which rereads only the
// directories whose stat data changed and the exclude files whose content
// did: a save right after another still sees a new untracked file in a
// directory it had cached, a file a changed .gitignore no longer ignores,
// and one a changed .git/info/exclude no longer ignores, each on its own.
func TestSaveSeesPastTheUntrackedCache(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, ".gitignore", "*.log\n")
	write(t, dir, ".git/info/exclude", "*.tmp\n")
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "sub/b.txt", "b\n")
	write(t, dir, "sub/keep.log", "a log\n")
	write(t, dir, "sub/keep.tmp", "a temp file\n")
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "start")
	r := open(t, dir)
	for range 2 {
		if _, err := r.Save(ctx, Manual(time.Now()), ""); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := os.ReadFile(filepath.Join(dir, ".git", "ralph", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ix, []byte("UNTR")) {
		t.Fatal("the private index holds no untracked cache: this test tests nothing")
	}
	steps := []struct {
		what string
		do   func()
		want string
	}{
		{"a new file in a cached directory", func() { write(t, dir, "sub/new.txt", "new\n") }, "sub/new.txt"},
		{"a .gitignore that stopped ignoring a file", func() { write(t, dir, ".gitignore", "*.nothing\n") }, "sub/keep.log"},
		{"an info/exclude that stopped ignoring a file", func() { write(t, dir, ".git/info/exclude", "*.nothing\n") }, "sub/keep.tmp"},
	}
	for _, st := range steps {
		st.do()
		s, err := r.Save(ctx, Manual(time.Now()), "")
		if err != nil {
			t.Fatal(err)
		}
		if files := snapshotFiles(t, dir, s); !slices.Contains(files, st.want) {
			t.Errorf("after %s, the snapshot lacks %s: %v", st.what, st.want, files)
		}
	}
}

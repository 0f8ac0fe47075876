package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ralph-harness/ralph/internal/testutil"
)

// fileState is what a watcher of the working tree tells apart: a file's
// kind, mode and content (a link's target).
type fileState struct {
	kind    string // "file" or "link"
	exec    bool
	content string
}

// workingFiles lists the files of dir's working tree (not directories,
// not .git), by slash-separated path.
func workingFiles(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	files := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files[rel] = fileState{kind: "link", content: target}
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files[rel] = fileState{kind: "file", exec: fi.Mode().Perm()&0o100 != 0, content: string(b)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// changedFiles is what a watcher reports between two listings: the files
// created, changed or removed, never the ones git ignores (here *.log
// and build/).
func changedFiles(before, after map[string]fileState) []string {
	var paths []string
	ignored := func(p string) bool { return strings.HasSuffix(p, ".log") || strings.HasPrefix(p, "build/") }
	for p, s := range after {
		if before[p] != s && !ignored(p) {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok && !ignored(p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// TestBuildTreeMatchesWriteTree makes random changes — new, changed and
// removed files, mode changes, symbolic links, new nested directories,
// directories replaced by files and back, removed directories, ignored and
// private files — and checks that each iteration's tree, built from the
// paths a watcher reports onto the previous one, is the tree git's own
// `git add -A` and `write-tree` give, and that every one is built
// without reading the whole tree.
func TestBuildTreeMatchesWriteTree(t *testing.T) {
	ctx := context.Background()
	names := []string{"a", "b", "c.txt", "d.x", "d-y", "j0", "d/e", "d/f.txt", "d/g/h", "d/g/i.sh", "j/k/l/m", "x.log", "build/o", ".ralph/logs/p.log", ".ralph/plan.tsx"}
	dirs := []string{"d", "d/g", "j", "j/k", "a", "b"}
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := newRepo(t)
			rng := rand.New(rand.NewPCG(seed, 31))
			abs := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
			// rm removes rel and all below it, if it is there.
			rm := func(rel string) {
				if err := os.RemoveAll(abs(rel)); err != nil && !errors.Is(err, syscall.ENOTDIR) {
					t.Fatal(err)
				}
			}
			// put writes rel, replacing any file in the way of its
			// directories.
			put := func(rel, content string) {
				for i := strings.IndexByte(rel, '/'); i >= 0; i = nextSlash(rel, i) {
					if fi, err := os.Lstat(abs(rel[:i])); err == nil && !fi.IsDir() {
						rm(rel[:i])
					}
				}
				if fi, err := os.Lstat(abs(rel)); err == nil && fi.IsDir() {
					rm(rel)
				}
				write(t, dir, rel, content)
			}
			write(t, dir, ".gitignore", "*.log\nbuild/\n")
			put("d/f.txt", "f\n")
			put("d/g/h", "h\n")
			put("j/k/l/m", "m\n")
			put("c.txt", "c\n")
			r, prev := startTask(t, dir)
			log := testutil.LogGit(t)
			gitCalls(t, log)
			built := 0
			for step := 1; step <= 25; step++ {
				before := workingFiles(t, dir)
				var did []string
				for range 1 + rng.IntN(4) {
					name := names[rng.IntN(len(names))]
					switch op := rng.IntN(8); op {
					case 0, 1:
						put(name, fmt.Sprintf("%d %d\n", step, rng.IntN(3)))
						did = append(did, "write "+name)
					case 2:
						rm(name)
						did = append(did, "remove "+name)
					case 3:
						if fi, err := os.Lstat(abs(name)); err == nil && fi.Mode().IsRegular() {
							if err := os.Chmod(abs(name), fi.Mode()^0o111); err != nil {
								t.Fatal(err)
							}
							did = append(did, "chmod "+name)
						}
					case 4:
						put(name, "")
						rm(name)
						if err := os.Symlink(fmt.Sprintf("target-%d", rng.IntN(3)), abs(name)); err != nil {
							t.Fatal(err)
						}
						did = append(did, "symlink "+name)
					case 5:
						d := dirs[rng.IntN(len(dirs))]
						rm(d)
						did = append(did, "remove directory "+d)
					case 6:
						d := dirs[rng.IntN(len(dirs))]
						put(d, "a file where a directory was\n")
						did = append(did, "file for directory "+d)
					case 7:
						d := dirs[rng.IntN(len(dirs))]
						put(d+"/n/o.txt", "a directory where a file was\n")
						did = append(did, "directory for file "+d)
					}
				}
				paths := changedFiles(before, workingFiles(t, dir))
				tree, err := r.SaveIteration(ctx, 1, step, Changes{Known: true, Paths: paths, Since: prev})
				if err != nil {
					t.Fatalf("step %d (%v): %v", step, did, err)
				}
				calls := gitCalls(t, log)
				if !slices.ContainsFunc(calls, readsTree) {
					built++
				} else {
					t.Logf("step %d (%v, paths %v) read the whole tree", step, did, paths)
				}
				if want := referenceTree(t, dir); tree != want {
					t.Fatalf("step %d (%v, paths %v): tree %s, git gives %s\nbuilt: %v\ngit:   %v", step, did, paths, tree, want, treeFiles(t, dir, tree), treeFiles(t, dir, want))
				}
				gitCalls(t, log)
				prev = tree
			}
			t.Logf("%d of 25 iterations built from their paths", built)
			if built != 25 {
				t.Errorf("%d of 25 iterations built from their paths, want all", built)
			}
		})
	}
}

// FuzzParseTree feeds parseTree arbitrary tree content: it never panics,
// what it accepts has names a tree may hold and ids, and writing it again
// gives a tree id.
func FuzzParseTree(f *testing.F) {
	id := strings.Repeat("\x01", 20)
	f.Add([]byte("100644 a.txt\x00" + id + "40000 d\x00" + id))
	f.Add([]byte("120000 link\x00" + id + "160000 sub\x00" + id))
	f.Add([]byte("100644 x\x00short"))
	f.Add([]byte("100664 odd\x00" + id))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseTree(b)
		if err != nil {
			return
		}
		n := &dirNode{entries: entries, owned: true}
		var batch bytes.Buffer
		var written []writtenTree
		id, empty := n.write(&batch, &written)
		if empty != (len(entries) == 0) || (!empty && len(id) != 40) {
			t.Fatalf("write of %d entries: %q empty %v", len(entries), id, empty)
		}
		for name, e := range entries {
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(e.id) != 40 {
				t.Fatalf("entry %q %+v", name, e)
			}
		}
	})
}

// Names that git's line-reading commands would misread (a leading quote,
// a carriage return), and other odd ones, are recorded as git records
// them.
func TestBuildTreeOddNames(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	// What a misread name would read instead.
	write(t, dir, "q", "decoy\n")
	write(t, dir, "cr", "decoy\n")
	r, prev := startTask(t, dir)
	for i, name := range []string{`"q"`, "cr\r", `"quoted".txt`, "sp ace/t\tab", "ü/é.txt", "-dash", `back\slash`} {
		write(t, dir, name, fmt.Sprintf("%d\n", i))
		tree, err := r.SaveIteration(ctx, 1, i+1, Changes{Known: true, Paths: []string{name}, Since: prev})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if want := referenceTree(t, dir); tree != want {
			t.Errorf("after %q: tree %s, git gives %s: %q", name, tree, want, treeFiles(t, dir, tree))
		}
		prev = tree
	}
}

// The trees on a changed path are read from git once, and hash-object
// keeps running: the next change in the same directory starts no git at
// all (the trees are written as loose objects), until the task's end
// (FlushIterations) ends it.
func TestBuildTreeReadsTreesOnce(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	write(t, dir, "src/pkg/a.go", "a\n")
	write(t, dir, "src/b.go", "b\n")
	r, prev := startTask(t, dir)
	log := testutil.LogGit(t)
	// The task's start read the configuration (its whole read built its
	// tree from the files git status named).
	for i, want := range []string{"hash-object cat-file", "", "", "hash-object"} {
		if i == 3 {
			if err := r.FlushIterations(); err != nil {
				t.Fatal(err)
			}
			gitCalls(t, log)
		}
		write(t, dir, "src/pkg/a.go", fmt.Sprintf("a %d\n", i))
		tree, err := r.SaveIteration(ctx, 1, i+1, Changes{Known: true, Paths: []string{"src/pkg/a.go"}, Since: prev})
		if err != nil {
			t.Fatal(err)
		}
		r.pendingTrees.wait(r) // the trees are written in the background
		if got := strings.Join(gitCalls(t, log), " "); got != want {
			t.Errorf("change %d ran %q, want %q", i+1, got, want)
		}
		if ref := referenceTree(t, dir); tree != ref {
			t.Errorf("change %d: tree %s, git gives %s", i+1, tree, ref)
		}
		gitCalls(t, log)
		prev = tree
	}
}

// startTask commits the tree under dir as the user's "start", opens its
// Repo (flushed when the test ends) and records iteration 0 of task 1,
// whose tree it returns.
func startTask(t *testing.T, dir string) (*Repo, string) {
	t.Helper()
	userGit(t, dir, "add", "-A")
	userGit(t, dir, "commit", "-q", "-m", "start")
	r := open(t, dir)
	t.Cleanup(func() { _ = r.FlushIterations() })
	tree, err := r.SaveIteration(context.Background(), 1, 0, Changes{})
	if err != nil {
		t.Fatal(err)
	}
	return r, tree
}

// buildTree writes its trees as loose objects, as git does, unless the
// repository is shared between users (git gives those files modes of
// its own) or its objects live elsewhere: then git's mktree writes them.
// Either way the trees are git's.
func TestTreesWrittenLooseUnlessShared(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		config []string
		env    string
		mktree bool
	}{
		{name: "plain"},
		{name: "shared", config: []string{"core.sharedRepository", "group"}, mktree: true},
		{name: "shared, false", config: []string{"core.sharedRepository", "false"}, mktree: true},
		{name: "a key with no value is true", config: []string{"core.symlinks"}},
		{name: "objects elsewhere", env: "GIT_OBJECT_DIRECTORY", mktree: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := newRepo(t)
			if len(c.config) == 2 {
				userGit(t, dir, "config", c.config[0], c.config[1])
			} else if len(c.config) == 1 {
				// git config cannot write a key without a value.
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(f, "[core]\n\t%s\n", strings.TrimPrefix(c.config[0], "core."))
				f.Close()
			}
			if c.env != "" {
				t.Setenv(c.env, filepath.Join(dir, ".git", "objects"))
			}
			write(t, dir, "src/pkg/a.go", "a\n")
			r, prev := startTask(t, dir)
			log := testutil.LogGit(t)
			write(t, dir, "src/pkg/a.go", "a changed\n")
			tree, err := r.SaveIteration(ctx, 1, 1, Changes{Known: true, Paths: []string{"src/pkg/a.go"}, Since: prev})
			if err != nil {
				t.Fatal(err)
			}
			r.pendingTrees.wait(r)
			if calls := gitCalls(t, log); slices.Contains(calls, "mktree") != c.mktree {
				t.Errorf("the iteration ran %v, want mktree %v", calls, c.mktree)
			}
			if ref := referenceTree(t, dir); tree != ref {
				t.Errorf("tree %s, git gives %s", tree, ref)
			}
			userGit(t, dir, "fsck", "--no-dangling", "--strict")
		})
	}
}

func TestGitBool(t *testing.T) {
	for _, c := range []struct {
		value string
		set   bool
		b, ok bool
	}{
		{"", false, true, true}, {"true", true, true, true}, {"YES", true, true, true}, {"On", true, true, true}, {"1", true, true, true},
		{"false", true, false, true}, {"no", true, false, true}, {"off", true, false, true}, {"0", true, false, true}, {"", true, false, true},
		{"2", true, false, false}, {"maybe", true, false, false},
	} {
		if b, ok := gitBool(c.value, c.set); b != c.b || ok != c.ok {
			t.Errorf("gitBool(%q, %v) = %v, %v; want %v, %v", c.value, c.set, b, ok, c.b, c.ok)
		}
	}
}

package snapshot

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// referenceTree is what the snapshot of dir must hold: the tree `git add
// -A` builds in a fresh index seeded from HEAD, ralph's private files
// excluded.
func referenceTree(t *testing.T, dir string) string {
	t.Helper()
	index := filepath.Join(t.TempDir(), "index")
	gitEnv := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index)
		out, err := cmd.CombinedOutput()
		if err != nil && !(args[0] == "add" && strings.Contains(string(out), "are ignored")) {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitEnv("read-tree", "HEAD")
	gitEnv(append([]string{"rm", "-r", "-q", "-f", "--cached", "--ignore-unmatch", "--"}, workspace.PrivatePaths()...)...)
	gitEnv(append([]string{"add", "-A", "--", "."}, excludes...)...)
	return gitEnv("write-tree")
}

// TestSaveMatchesAddAll saves after random edits — new files and
// directories, changes, deletions, renames, mode changes, symlinks, files
// that become directories and back, ignored and private files — and checks
// each snapshot holds exactly what git add -A would stage.
func TestSaveMatchesAddAll(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := newRepo(t)
			write(t, dir, ".gitignore", "*.log\nbuild/\n")
			write(t, dir, "src/a.go", "a\n")
			write(t, dir, "src/b/c.go", "c\n")
			write(t, dir, "README", "r\n")
			userGit(t, dir, "add", "-A")
			userGit(t, dir, "commit", "-q", "-m", "start")
			r := open(t, dir)
			rng := rand.New(rand.NewPCG(seed, 7))
			abs := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
			// put writes a file, doing nothing where a file is in the way
			// of its directory.
			put := func(rel, content string) {
				if os.MkdirAll(filepath.Dir(abs(rel)), 0o755) == nil {
					os.WriteFile(abs(rel), []byte(content), 0o644)
				}
			}
			for step := range 40 {
				var files, dirs []string
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err != nil || p == dir {
						return err
					}
					if d.Name() == ".git" {
						return filepath.SkipDir
					}
					rel, _ := filepath.Rel(dir, p)
					if d.IsDir() {
						dirs = append(dirs, filepath.ToSlash(rel))
					} else {
						files = append(files, filepath.ToSlash(rel))
					}
					return nil
				})
				pick := func(s []string) string {
					if len(s) == 0 {
						return "src/none"
					}
					return s[rng.IntN(len(s))]
				}
				var did []string
				for range 1 + rng.IntN(3) {
					base := pick(append(dirs, "src", "."))
					name := fmt.Sprintf("%s/n%d", base, rng.IntN(30))
					switch rng.IntN(10) {
					case 0:
						put(fmt.Sprintf("%s/d%d/e/f.txt", base, rng.IntN(9)), fmt.Sprint(step))
						did = append(did, "new dir in "+base)
					case 1:
						os.RemoveAll(abs(name))
						put(name, fmt.Sprint(rng.IntN(3)))
						did = append(did, "write "+name)
					case 2:
						p := pick(files)
						os.Remove(abs(p))
						did = append(did, "delete "+p)
					case 3:
						p := pick(files)
						os.Rename(abs(p), abs(name))
						did = append(did, "rename "+p+" "+name)
					case 4:
						p := pick(files)
						if fi, err := os.Lstat(abs(p)); err == nil && fi.Mode().IsRegular() {
							os.Chmod(abs(p), fi.Mode()^0o111)
						}
						did = append(did, "chmod "+p)
					case 5:
						os.RemoveAll(abs(name))
						os.Symlink(fmt.Sprint("t", rng.IntN(2)), abs(name))
						did = append(did, "symlink "+name)
					case 6:
						p := pick(files)
						os.Remove(abs(p))
						put(p+"/inner.txt", "now a directory")
						did = append(did, "file to dir "+p)
					case 7:
						d := pick(dirs)
						if d != ".ralph" && !strings.HasPrefix(d, ".ralph/") {
							os.RemoveAll(abs(d))
							put(d, "now a file")
							did = append(did, "dir to file "+d)
						}
					case 8:
						p := []string{"x.log", "src/y.log", "build/out", ".ralph/ralph.db", ".ralph/logs/run.log", ".ralph/plan.tsx"}[rng.IntN(6)]
						put(p, fmt.Sprint(step))
						did = append(did, "ignored or private "+p)
					case 9:
						d := pick(dirs)
						os.RemoveAll(abs(d))
						did = append(did, "delete dir "+d)
					}
				}
				s, err := r.Save(ctx, Manual(r.now()), "")
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if want := referenceTree(t, dir); s.Tree != want {
					got := userGit(t, dir, "ls-tree", "-r", s.Tree)
					ref := userGit(t, dir, "ls-tree", "-r", want)
					t.Fatalf("step %d, after %v:\nsnapshot:\n%s\ngit add -A:\n%s", step, did, got, ref)
				}
			}
		})
	}
}

// The private index is split, its shared part a .git/sharedindex file. A
// user's git that removes it (cleaning up old shared index files) does
// not break the next snapshot: the index is built again, and the
// snapshot holds the working tree.
func TestSaveAfterSharedIndexRemoved(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	populate(t, dir)
	r := open(t, dir)
	if _, err := r.Save(ctx, "task-1-pre", ""); err != nil {
		t.Fatal(err)
	}
	shared, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	if len(shared) == 0 {
		t.Fatal("no shared index: the private index is not split")
	}
	for _, f := range shared {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "src/app.tsx", "export const App = () => 'changed'\n")
	s, err := r.Save(ctx, "task-1-post", "")
	if err != nil {
		t.Fatalf("save after the shared index went: %v", err)
	}
	if got := userGit(t, dir, "show", s.Commit+":src/app.tsx"); got != "export const App = () => 'changed'\n" {
		t.Errorf("src/app.tsx in the snapshot = %q", got)
	}
	if got := userGit(t, dir, "show", s.Commit+":README.md"); got != "# demo\n" {
		t.Errorf("README.md in the snapshot = %q", got)
	}
}

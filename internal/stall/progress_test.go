package stall

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// skipLikeEngine leaves out what the engine's skip does: node_modules and
// .cache at any depth and ralph's own state.
func skipLikeEngine(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if part == "node_modules" || part == ".cache" {
			return true
		}
	}
	return strings.HasPrefix(rel, ".ralph/")
}

func runGit(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func writeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a git repository with a committed project, a .gitignore,
// ignored build output and a node_modules directory.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	writeFile(t, dir, ".gitignore", "build/\n*.log\n")
	for i := range 12 {
		writeFile(t, dir, fmt.Sprintf("src/p%d/f%d.go", i%3, i), fmt.Sprintf("package p%d\n", i))
	}
	writeFile(t, dir, "README", "readme\n")
	writeFile(t, dir, "build/out.bin", "built")
	writeFile(t, dir, "node_modules/dep/index.js", "dep")
	writeFile(t, dir, "src/debug.log", "log")
	// A tracked file that a pattern matches counts, as git tracks it.
	writeFile(t, dir, "keep.log", "kept")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "add", "-f", "keep.log")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// gitIgnored returns a skip function for TreeHash that reports the paths
// under dir that git lists as ignored: untracked files and directories
// matched by .gitignore, .git/info/exclude or core.excludesFile.
func gitIgnored(ctx context.Context, dir string) (func(rel string) bool, error) {
	set, err := listIgnored(ctx, dir)
	if err != nil {
		return nil, err
	}
	return func(rel string) bool { return set[rel] }, nil
}

// tWriter sends log lines to the test's log.
type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// referenceHash is TreeHash over the files a Tracker tracks.
func referenceHash(t testing.TB, dir string) string {
	t.Helper()
	ctx := context.Background()
	ign, err := gitIgnored(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := TreeHash(ctx, dir, func(rel string) bool { return skipLikeEngine(rel) || ign(rel) })
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// edit makes one random change of the kinds an agent makes (and some that
// must not count) and returns a description of it.
func edit(t *testing.T, rng *rand.Rand, dir string) string {
	t.Helper()
	var files, dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			dirs = append(dirs, rel)
		} else {
			files = append(files, rel)
		}
		return nil
	})
	pick := func(s []string) string {
		if len(s) == 0 {
			return ""
		}
		return s[rng.IntN(len(s))]
	}
	abs := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	content := func() string { return fmt.Sprintf("content %d\n", rng.IntN(4)) } // often the same
	newName := func() string {
		base := pick(append(dirs, "", "src"))
		name := fmt.Sprintf("n%d.txt", rng.IntN(50))
		if base == "" {
			return name
		}
		return base + "/" + name
	}
	switch op := rng.IntN(16); op {
	case 0:
		p := newName()
		if fi, err := os.Lstat(abs(p)); err == nil && fi.IsDir() {
			return "nothing"
		}
		writeFile(t, dir, p, content())
		return "create " + p
	case 1:
		p := pick(files)
		if p == "" {
			return "nothing"
		}
		os.Remove(abs(p))
		writeFile(t, dir, p, content())
		return "modify " + p
	case 2:
		p := pick(files)
		os.Remove(abs(p))
		return "delete " + p
	case 3:
		p, q := pick(files), newName()
		if p == "" {
			return "nothing"
		}
		os.MkdirAll(filepath.Dir(abs(q)), 0o755)
		if err := os.Rename(abs(p), abs(q)); err != nil {
			return "rename failed"
		}
		return "rename " + p + " " + q
	case 4:
		p := pick(files)
		fi, err := os.Lstat(abs(p))
		if p == "" || err != nil || !fi.Mode().IsRegular() {
			return "nothing"
		}
		os.Chmod(abs(p), fi.Mode()^0o100)
		return "chmod " + p
	case 5:
		p := pick([]string{"x.log", "src/y.log", "build/z.txt", "build/sub/w", "node_modules/dep/a.js", ".ralph/ralph.db", "src/.cache/c"})
		writeFile(t, dir, p, content())
		return "ignored " + p
	case 6:
		d := fmt.Sprintf("%s/u%d", pick(append(dirs, "src")), rng.IntN(20))
		writeFile(t, dir, d+"/a.txt", content())
		writeFile(t, dir, d+"/deep/b.txt", content())
		writeFile(t, dir, d+"/deep/c.log", content())
		writeFile(t, dir, d+"/node_modules/m/x.js", content())
		writeFile(t, dir, d+"/build/out", content())
		return "untracked dir " + d
	case 7:
		d := pick(dirs)
		if d == "" || d == "build" || d == "node_modules" {
			return "nothing"
		}
		to := fmt.Sprintf("r%d", rng.IntN(10))
		if strings.Contains(d, "/") && rng.IntN(2) == 0 {
			to = filepath.ToSlash(filepath.Dir(d)) + "/" + to
		}
		if strings.HasPrefix(to, d+"/") {
			return "nothing"
		}
		if err := os.Rename(abs(d), abs(to)); err != nil {
			return "rename dir failed"
		}
		return "rename dir " + d + " " + to
	case 8:
		d := pick(dirs)
		if d == "" {
			return "nothing"
		}
		os.RemoveAll(abs(d))
		return "delete dir " + d
	case 9:
		p := pick(files)
		if p == "" {
			return "nothing"
		}
		b, _ := os.ReadFile(abs(p))
		os.WriteFile(abs(p), b, 0o644)
		return "rewrite same " + p
	case 10:
		p := newName()
		os.Remove(abs(p))
		os.MkdirAll(filepath.Dir(abs(p)), 0o755)
		os.Symlink(fmt.Sprintf("target%d", rng.IntN(3)), abs(p))
		return "symlink " + p
	case 11:
		runGit(t, dir, "add", "-A")
		runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "step")
		return "commit"
	case 12:
		p := pick(files)
		if p == "" {
			return "nothing"
		}
		writeFile(t, dir, p, content())
		writeFile(t, dir, p, content()) // written twice in one iteration
		return "modify twice " + p
	case 13:
		pats := []string{"build/\n*.log\n", "build/\n*.log\n*.txt\n", "build/\n*.log\nsrc/p1/\n", "*.log\n"}
		writeFile(t, dir, ".gitignore", pick(pats))
		return "gitignore"
	case 14:
		d := pick(dirs)
		if d == "" {
			return "nothing"
		}
		os.Chmod(abs(d), 0o700)
		return "chmod dir " + d
	default:
		return "nothing"
	}
}

// TestTrackerMatchesTreeHash runs random edit sequences in a real git
// repository and checks, after each, that the Tracker's hash changed
// exactly when the reference TreeHash (of the files git does not ignore)
// changed, and that no-progress detectors fed either give the same
// verdicts.
func TestTrackerMatchesTreeHash(t *testing.T) {
	for seed := range uint64(trackerSeeds()) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := newRepo(t)
			rng := rand.New(rand.NewPCG(seed, 19))
			tr := NewTracker(dir, skipLikeEngine, slog.New(slog.NewTextHandler(tWriter{t}, nil)))
			defer tr.Close()
			ctx := context.Background()
			fast, err := tr.Hash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ref := referenceHash(t, dir)
			cfg := Config{NoProgressThreshold: 2, RepeatThreshold: -1, RepeatedErrorThreshold: -1}
			dFast, dRef := NewDetector(cfg), NewDetector(cfg)
			dFast.SetBaseline(fast)
			dRef.SetBaseline(ref)
			var log []string
			changes := 0
			for step := 1; step <= 60; step++ {
				for range 1 + rng.IntN(3) {
					log = append(log, edit(t, rng, dir))
					if os.Getenv("TRACKER_DEBUG") != "" {
						t.Logf("step %d: %s", step, log[len(log)-1])
					}
				}
				f, err := tr.Hash(ctx)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				r := referenceHash(t, dir)
				// The incremental sum is the sum a fresh walk finds.
				fresh := NewTracker(dir, skipLikeEngine, nil)
				if h, err := fresh.Hash(ctx); err != nil || h != f {
					var diff []string
					for p := range tr.files {
						if _, ok := fresh.files[p]; !ok {
							diff = append(diff, "only tracked incrementally: "+p)
						} else if fresh.files[p] != tr.files[p] {
							diff = append(diff, "differs: "+p)
						}
					}
					for p := range fresh.files {
						if _, ok := tr.files[p]; !ok {
							diff = append(diff, "only found by a fresh walk: "+p)
						}
					}
					gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
					t.Logf(".gitignore: %q, ignored: %v", gi, tr.ignored)
					t.Fatalf("step %d: the incremental hash is not a fresh walk's (%v):\n%s\nafter:\n%s", step, err, strings.Join(diff, "\n"), strings.Join(log, "\n"))
				}
				fresh.Close()
				if (f != fast) != (r != ref) {
					t.Fatalf("step %d: tracker changed %v, TreeHash changed %v, after:\n%s", step, f != fast, r != ref, strings.Join(log, "\n"))
				}
				if r != ref {
					changes++
				}
				calls := []Call{{Name: "bash", Input: []byte(fmt.Sprint(step))}}
				vf := dFast.Observe(Observation{Iteration: step, Calls: calls, TreeHash: f})
				vr := dRef.Observe(Observation{Iteration: step, Calls: calls, TreeHash: r})
				if vf.Kind != vr.Kind || vf.Count != vr.Count {
					t.Fatalf("step %d: verdicts differ: tracker %v/%d, TreeHash %v/%d", step, vf.Kind, vf.Count, vr.Kind, vr.Count)
				}
				if vf.Stalled() {
					dFast.Reset()
					dRef.Reset()
				}
				fast, ref = f, r
				log = log[:0]
			}
			if changes == 0 || changes == 60 {
				t.Fatalf("%d of 60 steps changed the tree: the sequence does not test both verdicts", changes)
			}
			if runtime.GOOS == "linux" && (tr.walk || tr.w == nil) {
				t.Fatal("the tracker fell back to walking the tree")
			}
		})
	}
}

// TestTrackerFallsBack checks the full walk outside git and when WalkEnv
// asks for it, with the same verdicts.
func TestTrackerFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		git  bool
		env  string
	}{{"not git", false, ""}, {"env", true, "1"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(WalkEnv, tc.env)
			dir := t.TempDir()
			if tc.git {
				dir = newRepo(t)
			}
			writeFile(t, dir, "a.txt", "a")
			tr := NewTracker(dir, skipLikeEngine, nil)
			defer tr.Close()
			ctx := context.Background()
			h1, err := tr.Hash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tr.w != nil || !tr.walk {
				t.Fatal("the tracker watches instead of walking")
			}
			h2, _ := tr.Hash(ctx)
			writeFile(t, dir, "a.txt", "b")
			h3, _ := tr.Hash(ctx)
			if h1 != h2 || h2 == h3 {
				t.Fatalf("hashes %s %s %s: want the first two equal, the third different", h1, h2, h3)
			}
		})
	}
}

// trackerSeeds is how many random sequences TestTrackerMatchesTreeHash
// runs: 6, or TRACKER_SEEDS for a longer search.
func trackerSeeds() int {
	if n, err := strconv.Atoi(os.Getenv("TRACKER_SEEDS")); err == nil && n > 0 {
		return n
	}
	return 6
}

// The ignored paths the Tracker leaves unwatched: a directory a pattern
// matches, and ignored files; not a directory listed only because every
// file in it is ignored now (a file added later may not be), nor one a
// pattern matches that holds a tracked file, whose files git lists one by
// one.
func TestIgnoredPaths(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	writeFile(t, dir, ".gitignore", "build/\nvendor/\n*.log\n")
	writeFile(t, dir, "src/main.go", "package main\n")
	writeFile(t, dir, "build/out.bin", "built")
	writeFile(t, dir, "logs/a.log", "log")
	writeFile(t, dir, "vendor/kept.go", "package vendor\n")
	writeFile(t, dir, "vendor/extra.go", "package vendor\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "add", "-f", "vendor/kept.go")
	runGit(t, dir, "commit", "-q", "-m", "initial")
	got, err := ignoredPaths(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"build": true, "logs/a.log": true, "vendor/extra.go": true, "logs": false, "vendor": false, "vendor/kept.go": false, "src": false} {
		if got[p] != want {
			t.Errorf("ignored[%q] = %v, want %v (all: %v)", p, got[p], want, got)
		}
	}
}

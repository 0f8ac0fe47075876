// Command mutate checks that a package's own tests catch real bugs: it
// applies hand-listed mutations (mutations.go) one at a time to a scratch
// copy of the repository, runs that package's tests, and prints the
// mutations that survived and the share killed per package.
//
// Usage, from anywhere in the repository:
//
//	go run ./scripts/mutate [-pkg engine,gate] [-timeout 5m] [-v]
//
// A mutation is a file, an exact snippet of it and its replacement. The
// snippet must occur exactly once: a snippet no longer found (the code
// moved on) or found more than once is reported as stale, never as
// killed, and leaves the ratio alone; so is a mutation that does not
// build. The real tree is never written to.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// A mutation is one hand-made bug.
type mutation struct {
	File string // slash-separated, from the repository root
	Old  string // the exact original snippet
	New  string // what replaces it
	Why  string // the bug it stands for
}

// pkg is the package directory the mutation belongs to.
func (m mutation) pkg() string { return filepath.ToSlash(filepath.Dir(m.File)) }

// The verdicts.
const (
	killed   = "killed"
	survived = "SURVIVED"
	stale    = "stale"
	broken   = "broken" // does not build: the mutation itself is wrong
)

func main() {
	pkgs := flag.String("pkg", "", "comma-separated package names (engine,gate) to mutate; all when empty")
	timeout := flag.Duration("timeout", 5*time.Minute, "time limit of one package test run")
	verbose := flag.Bool("v", false, "print the test output of survivors and broken mutations")
	flag.Parse()
	// Ctrl-C stops the test run under way and removes the scratch copy.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *pkgs, *timeout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, pkgFilter string, timeout time.Duration, verbose bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	var todo []mutation
	for _, m := range mutations {
		if pkgFilter == "" || slices.Contains(strings.Split(pkgFilter, ","), filepath.Base(m.pkg())) {
			todo = append(todo, m)
		}
	}
	if len(todo) == 0 {
		return fmt.Errorf("no mutation for -pkg %q", pkgFilter)
	}
	scratch, err := os.MkdirTemp("", "ralph-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if err := copyTree(root, scratch); err != nil {
		return fmt.Errorf("copy the repository: %w", err)
	}
	fmt.Fprintf(w, "scratch copy in %s\n", scratch)

	var order []string
	for _, m := range todo {
		if !slices.Contains(order, m.pkg()) {
			order = append(order, m.pkg())
		}
	}
	for _, p := range order {
		if out, err := goTest(ctx, scratch, p, timeout); err != nil {
			return fmt.Errorf("%s fails without any mutation:\n%s", p, out)
		}
	}

	verdicts := map[string]map[string]int{}
	var survivors []mutation
	for i, m := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		v, out := apply(ctx, scratch, m, timeout)
		if verdicts[m.pkg()] == nil {
			verdicts[m.pkg()] = map[string]int{}
		}
		verdicts[m.pkg()][v]++
		if v == survived {
			survivors = append(survivors, m)
		}
		fmt.Fprintf(w, "%3d/%d %-8s %s: %s\n", i+1, len(todo), v, m.File, m.Why)
		if verbose && (v == survived || v == broken || v == stale) {
			fmt.Fprintf(w, "%s\n", indent(out))
		}
	}

	fmt.Fprintf(w, "\n%d survivors\n", len(survivors))
	for _, m := range survivors {
		fmt.Fprintf(w, "  %s: %s\n      - %s\n      + %s\n", m.File, m.Why, oneLine(m.Old), oneLine(m.New))
	}
	return report(w, order, verdicts)
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "⏎") }

// apply makes m in the scratch copy, runs the package's tests and puts the
// file back.
func apply(ctx context.Context, scratch string, m mutation, timeout time.Duration) (verdict, output string) {
	file := filepath.Join(scratch, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(file)
	if err != nil {
		return stale, err.Error()
	}
	if n := bytes.Count(orig, []byte(m.Old)); n != 1 {
		return stale, fmt.Sprintf("the snippet is found %d times", n)
	}
	mutated := bytes.Replace(orig, []byte(m.Old), []byte(m.New), 1)
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return stale, err.Error()
	}
	defer os.WriteFile(file, orig, 0o644)
	out, err := goTest(ctx, scratch, m.pkg(), timeout)
	switch {
	case err == nil:
		return survived, out
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return broken, out
	}
	return killed, out
}

// goTest runs the tests of the package directory pkg, and nothing else.
func goTest(ctx context.Context, dir, pkg string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-failfast", "-timeout", timeout.String(), "./"+pkg+"/")
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out) + "\n(timed out)", ctx.Err()
	}
	return string(out), err
}

func report(w io.Writer, order []string, verdicts map[string]map[string]int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\npackage\tmutations\tkilled\tsurvived\tstale\tbroken\tkilled %")
	for _, p := range order {
		v := verdicts[p]
		live := v[killed] + v[survived]
		ratio := "-"
		if live > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*float64(v[killed])/float64(live))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", p, v[killed]+v[survived]+v[stale]+v[broken], v[killed], v[survived], v[stale], v[broken], ratio)
	}
	return tw.Flush()
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// copyTree copies the files under src to dst, leaving out .git and the
// repository's own ralph state (.ralph at the root).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && (d.Name() == ".git" || rel == ".ralph"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

// Command snapshot benchmarks ralph's snapshots against their floor, plain
// git, and against isomorphic-git, which the seed's snapshot design used.
//
// For each repository size it generates a tree of text files (about 10 KB
// each, so 100 MB at 10,000 files), commits it with git and takes a first
// ralph snapshot. Then, each round, it changes the same number of files and
// times:
//
//   - ralph save: snapshot.Repo.Save, in process (incremental)
//   - git save: `git add -A && git commit` on the same tree (the floor)
//   - ralph rollback: snapshot.Repo.Rollback to the previous snapshot and
//     back (two samples; each includes the automatic pre-rollback save)
//   - git checkout: `git checkout` of the previous commit and back
//   - ralph CLI save: the ralph binary's `snapshot save` (with -ralph)
//
// and, with -node-dir, the same add + commit and checkout with
// isomorphic-git on a copy of the tree (bench/snapshot/iso.cjs). It prints
// medians and ratios. Run it through bench/snapshot.sh.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/snapshot"
)

func main() {
	sizes := flag.String("sizes", "1000,10000", "comma-separated file counts")
	fileKB := flag.Int("file-kb", 10, "average file size in KB")
	rounds := flag.Int("rounds", 7, "rounds for ralph and git")
	isoRounds := flag.Int("iso-rounds", 3, "rounds for isomorphic-git")
	changed := flag.Int("changed", 20, "files changed per round")
	ralphBin := flag.String("ralph", "", "ralph binary to time `snapshot save` with (optional)")
	nodeDir := flag.String("node-dir", "", "directory whose node_modules holds isomorphic-git (optional)")
	keep := flag.Bool("keep", false, "keep the generated repositories")
	flag.Parse()

	fmt.Printf("%s, %s\n", strings.TrimSpace(output("", "git", "version")), time.Now().Format(time.RFC3339))
	for s := range strings.SplitSeq(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fatal(err)
		}
		b := bench{n: n, fileKB: *fileKB, rounds: *rounds, isoRounds: *isoRounds, changed: *changed,
			ralphBin: *ralphBin, nodeDir: *nodeDir, keep: *keep, samples: map[string][]time.Duration{}}
		b.run()
	}
}

type bench struct {
	n, fileKB, rounds, isoRounds, changed int
	ralphBin, nodeDir                     string
	keep                                  bool

	root, repo, iso string
	files           []string
	samples         map[string][]time.Duration
	firsts          map[string]time.Duration
}

func (b *bench) run() {
	ctx := context.Background()
	var err error
	b.root, err = os.MkdirTemp("", fmt.Sprintf("ralph-bench-%d-", b.n))
	if err != nil {
		fatal(err)
	}
	if !b.keep {
		defer os.RemoveAll(b.root)
	}
	b.repo = filepath.Join(b.root, "repo")
	b.iso = filepath.Join(b.root, "iso")
	b.firsts = map[string]time.Duration{}
	total := b.generate(b.repo)

	git := func(args ...string) {
		run(b.repo, "git", append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "advice.detachedHead=false",
			"-c", "user.name=bench", "-c", "user.email=bench@localhost"}, args...)...)
	}
	git("init", "-q", "-b", "main")
	start := time.Now()
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	b.firsts["git save"] = time.Since(start)
	git("gc", "-q")
	head := strings.TrimSpace(output(b.repo, "git", "rev-parse", "HEAD"))

	r, err := snapshot.Open(ctx, b.repo, nil)
	if err != nil {
		fatal(err)
	}
	start = time.Now()
	prevS, err := r.Save(ctx, snapshot.TaskPre(0), "initial")
	if err != nil {
		fatal(err)
	}
	b.firsts["ralph save"] = time.Since(start)
	prevC := head

	for round := 1; round <= b.rounds; round++ {
		b.modify(b.repo, round)
		var curS snapshot.Snapshot
		ralphSave := func() {
			start := time.Now()
			s, err := r.Save(ctx, snapshot.TaskPost(round), "")
			if err != nil {
				fatal(err)
			}
			b.add("ralph save", time.Since(start))
			curS = s
		}
		gitSave := func() {
			start := time.Now()
			git("add", "-A")
			git("commit", "-q", "-m", "round "+strconv.Itoa(round))
			b.add("git save", time.Since(start))
		}
		// Alternate which goes first: the second finds the blobs written.
		if round%2 == 1 {
			ralphSave()
			gitSave()
		} else {
			gitSave()
			ralphSave()
		}
		curC := strings.TrimSpace(output(b.repo, "git", "rev-parse", "HEAD"))

		for _, c := range []string{prevC, curC} {
			start := time.Now()
			git("checkout", "-q", c)
			b.add("git checkout", time.Since(start))
		}
		for _, s := range []snapshot.Snapshot{prevS, curS} {
			start := time.Now()
			if _, err := r.Rollback(ctx, s.Name); err != nil {
				fatal(err)
			}
			b.add("ralph rollback", time.Since(start))
		}
		prevS, prevC = curS, curC
	}
	if b.ralphBin != "" {
		for round := b.rounds + 1; round <= 2*b.rounds; round++ {
			b.modify(b.repo, round)
			start := time.Now()
			run(b.repo, b.ralphBin, "snapshot", "save", "cli round")
			b.add("ralph CLI save", time.Since(start))
		}
	}
	// The snapshot of the last state must equal the working tree.
	if st, err := r.Status(ctx); err != nil || st.Current == "" {
		fatal(fmt.Errorf("after the benchmark the tree matches no snapshot: %+v, %v", st, err))
	}

	if b.nodeDir != "" {
		b.generate(b.iso)
		b.isomorphic()
	}
	b.report(total)
}

// generate writes b.n files of random text under dir and returns their
// total size. The same n gives the same tree.
func (b *bench) generate(dir string) int64 {
	rng := rand.New(rand.NewPCG(uint64(b.n), 42))
	b.files = b.files[:0]
	var total int64
	const alphabet = "abcdefghijklmnopqrstuvwxyz      \n"
	for i := range b.n {
		rel := fmt.Sprintf("src/d%03d/e%02d/file%05d.txt", i/500, (i/50)%10, i)
		size := b.fileKB*1024/2 + rng.IntN(b.fileKB*1024)
		buf := make([]byte, size)
		for j := range buf {
			buf[j] = alphabet[rng.IntN(len(alphabet))]
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fatal(err)
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			fatal(err)
		}
		b.files = append(b.files, rel)
		total += int64(size)
	}
	return total
}

// pick chooses the files a round changes; iso.cjs makes the same choice.
func (b *bench) pick(round, i int) string {
	return b.files[(round*7919+i*104729)%len(b.files)]
}

func (b *bench) modify(dir string, round int) {
	for i := range b.changed {
		p := filepath.Join(dir, b.pick(round, i))
		info, err := os.Stat(p)
		if err != nil {
			fatal(err)
		}
		buf := make([]byte, info.Size())
		for j := range buf {
			buf[j] = byte('a' + rand.IntN(26))
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			fatal(err)
		}
	}
}

func (b *bench) isomorphic() {
	list := filepath.Join(b.root, "files.json")
	data, _ := json.Marshal(b.files)
	if err := os.WriteFile(list, data, 0o644); err != nil {
		fatal(err)
	}
	script, err := filepath.Abs(filepath.Join(filepath.Dir(os.Args[0]), "iso.cjs"))
	if _, statErr := os.Stat(script); err != nil || statErr != nil {
		script = filepath.Join("bench", "snapshot", "iso.cjs")
	}
	out := output("", "node", script, b.nodeDir, b.iso, list, strconv.Itoa(b.isoRounds), strconv.Itoa(b.changed))
	var res struct {
		FirstSave  float64   `json:"first_save_ms"`
		SaveMS     []float64 `json:"save_ms"`
		CheckoutMS []float64 `json:"checkout_ms"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		fatal(fmt.Errorf("isomorphic-git output %q: %w", out, err))
	}
	msd := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	b.firsts["isomorphic-git save"] = msd(res.FirstSave)
	for _, v := range res.SaveMS {
		b.add("isomorphic-git save", msd(v))
	}
	for _, v := range res.CheckoutMS {
		b.add("isomorphic-git checkout", msd(v))
	}
}

func (b *bench) add(name string, d time.Duration) { b.samples[name] = append(b.samples[name], d) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func (b *bench) report(total int64) {
	fmt.Printf("\n== %d files, %.0f MB, %d changed per round, load average %s ==\n", b.n, float64(total)/1e6, b.changed, loadAverage())
	fmt.Printf("%-26s %8s %12s %12s %12s\n", "operation", "samples", "median", "min", "max")
	for _, name := range []string{"ralph save", "git save", "ralph CLI save", "isomorphic-git save",
		"ralph rollback", "git checkout", "isomorphic-git checkout"} {
		s := b.samples[name]
		if len(s) == 0 {
			continue
		}
		fmt.Printf("%-26s %8d %12s %12s %12s\n", name, len(s), ms(median(s)), ms(slices.Min(s)), ms(slices.Max(s)))
	}
	fmt.Printf("first (cold) save: ralph %s, git add+commit %s", ms(b.firsts["ralph save"]), ms(b.firsts["git save"]))
	if d, ok := b.firsts["isomorphic-git save"]; ok {
		fmt.Printf(", isomorphic-git %s", ms(d))
	}
	fmt.Println()
	rs, gs, is := median(b.samples["ralph save"]), median(b.samples["git save"]), median(b.samples["isomorphic-git save"])
	rr, gc, ic := median(b.samples["ralph rollback"]), median(b.samples["git checkout"]), median(b.samples["isomorphic-git checkout"])
	fmt.Printf("save:     ralph / git = %.2fx (target <= 1.5x)", float64(rs)/float64(gs))
	if is > 0 {
		fmt.Printf("; isomorphic-git / ralph = %.1fx (target >= 10x)", float64(is)/float64(rs))
	}
	fmt.Println()
	fmt.Printf("rollback: ralph / git checkout = %.2fx (goal <= 2x; the rollback includes its undo snapshot); ralph rollback %s (target < 300 ms at 10,000 files)", float64(rr)/float64(gc), ms(rr))
	if ic > 0 {
		fmt.Printf("; isomorphic-git checkout / ralph rollback = %.1fx", float64(ic)/float64(rr))
	}
	fmt.Println()
}

// loadAverage returns the 1, 5 and 15 minute load averages, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func run(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		fatal(fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String()))
	}
}

func output(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fatal(fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String()))
	}
	return string(out)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

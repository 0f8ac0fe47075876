//go:build unix

// Command gap measures ralph's own time between two agent sessions, and
// a task's fixed cost, against yardsticks taken in the same run.
//
//	go run ./bench/gap -ralph PATH [-files 500] [-iterations 30] [-rounds 3] [-task]
//
// It makes (once, under -work) a committed git project of -files files
// with git fast-import, and a stand-in claude: this program again, which
// reads its prompt, prints a recorded stream-json session and exits,
// appending its start and end times to a log. Then, -rounds times and in
// turn:
//
//   - ralph: `ralph run --agent claude --max-iterations N` over the
//     project; the gap is the time from one stand-in's end to the next
//     one's start;
//   - ralph again, with a stand-in that also writes one file of the
//     project (gap-write.txt, removed afterwards) each time: the gap of
//     iterations that change something, which ralph records as their
//     tree;
//   - the floor: a plain loop spawning the same stand-in N times with the
//     same prompt on its standard input, reading its output; the same gap;
//   - the same loop with each start through ralph's supervisor, as ralph
//     starts every agent (proc.Run, with the ralph binary as the
//     supervisor): once on the one persistent supervisor, ralph's way, and
//     once cold, re-executing ralph for every start. What each costs over
//     the floor.
//
// It prints the median gap of each with the load average, and what ralph's
// gap is made of: a run whose git goes through a logging wrapper (this
// program again) counts the git processes per gap, by subcommand, and the
// wall time they took.
//
// -task measures a task's fixed cost instead: a whole `ralph run` whose
// stand-in completes in its first iteration, its summary written so that
// the gates pass (the pre-task snapshot, the
// stall tracker's first look at the tree, one iteration, the gates, the
// post-task snapshot, process start and store included), less the
// stand-in's own run time, against `git add -A && git commit` of one
// changed file on the same tree.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-harness/ralph/bench/internal/figure"
	"github.com/ralph-harness/ralph/internal/proc"
)

// Environment of the stand-in agent and the git wrapper.
const (
	envLog      = "RALPH_GAP_LOG"      // the stand-in appends "start end" (ns) here
	envSession  = "RALPH_GAP_SESSION"  // the stream it prints
	envGitLog   = "RALPH_GAP_GITLOG"   // the git wrapper appends "start end args" here
	envRealGit  = "RALPH_GAP_REAL_GIT" // the git the wrapper runs
	envWrite    = "RALPH_GAP_WRITE"    // the file the stand-in writes, when set
	promise     = "<promise>COMPLETE</promise>"
	sessionFile = "internal/agent/claude/testdata/success.jsonl"
)

func main() {
	if os.Getenv(envRealGit) != "" && filepath.Base(os.Args[0]) == "git" {
		os.Exit(gitWrapper())
	}
	if os.Getenv(envLog) != "" {
		standIn()
		return
	}
	ralph := flag.String("ralph", "", "path of the ralph binary")
	files := flag.Int("files", 500, "files in the project")
	iterations := flag.Int("iterations", 30, "iterations of each run")
	rounds := flag.Int("rounds", 3, "ralph runs and floor loops, in turn")
	work := flag.String("work", filepath.Join(os.TempDir(), "ralph-gap"), "where the projects are kept between calls")
	task := flag.Bool("task", false, "measure a task's fixed cost instead of the gap")
	other := flag.String("vs", "", "another ralph binary (another commit's) measured in the same rounds")
	busy := flag.Int("busy", 0, "idle processes to keep running beside the bench, as on a developer's machine (which runs 300 to 1,000)")
	flag.Parse()
	if *ralph == "" {
		fail("-ralph is required")
	}
	if *busy > 0 {
		stop, err := idleProcesses(*busy)
		if err != nil {
			fail(err.Error())
		}
		defer stop()
		fmt.Printf("%d idle processes run beside the bench\n", *busy)
	}
	b, err := newBench(*ralph, *work, *files)
	if err != nil {
		fail(err.Error())
	}
	if *other != "" {
		// A project of its own: the two may not share a store's schema.
		if b.vs, err = newBench(*other, filepath.Join(*work, "vs"), *files); err != nil {
			fail(err.Error())
		}
	}
	if *task {
		err = b.taskCost(*rounds)
	} else {
		err = b.gap(*iterations, *rounds)
	}
	if err != nil {
		fail(err.Error())
	}
}

// idleProcesses starts n processes that wait on a pipe this one holds,
// so that they end with it however it ends, and returns what ends them.
func idleProcesses(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	var pipes []io.Closer
	stop = func() {
		for _, p := range pipes {
			p.Close()
		}
		for _, c := range cmds {
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command("cat")
		in, err := c.StdinPipe()
		if err == nil {
			err = c.Start()
		}
		if err != nil {
			stop()
			return nil, fmt.Errorf("start idle processes: %w", err)
		}
		cmds, pipes = append(cmds, c), append(pipes, in)
	}
	return stop, nil
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gap:", msg)
	os.Exit(1)
}

// standIn is the stand-in claude: it reads its prompt, prints the session
// and logs when it started and ended.
func standIn() {
	start := time.Now().UnixNano()
	_, _ = bufio.NewReader(os.Stdin).WriteTo(discard{})
	session, err := os.ReadFile(os.Getenv(envSession))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A completing session leaves the summary the has-summary gate
	// wants, so that the task completes: its post-task snapshot is part
	// of a task's fixed cost.
	if bytes.Contains(session, []byte(promise)) {
		if err := os.WriteFile(filepath.Join(".ralph", "summary.md"), []byte("bench task\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Stdout.Write(session)
	if name := os.Getenv(envWrite); name != "" {
		// One change an iteration, as an agent at work makes.
		if err := os.WriteFile(name, []byte(fmt.Sprintf("written at %d\n", start)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	appendLine(os.Getenv(envLog), fmt.Sprintf("%d %d", start, time.Now().UnixNano()))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// gitWrapper runs the real git with this process's arguments and logs it.
func gitWrapper() int {
	start := time.Now().UnixNano()
	cmd := exec.Command(os.Getenv(envRealGit), os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	appendLine(os.Getenv(envGitLog), fmt.Sprintf("%d %d %s", start, time.Now().UnixNano(), gitSubcommand(os.Args[1:])))
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// gitSubcommand is the first argument of a git command line that is not
// an option or an option's value.
func gitSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return "?"
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}

type bench struct {
	ralph, self, dir, session, completing string
	vs                                    *bench // -vs
	files                                 int
}

func newBench(ralph, work string, files int) (*bench, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ralph, err = filepath.Abs(ralph)
	if err != nil {
		return nil, err
	}
	work, err = filepath.Abs(work)
	if err != nil {
		return nil, err
	}
	b := &bench{ralph: ralph, self: self, files: files, dir: filepath.Join(work, fmt.Sprintf("project-%d", files))}
	rec, err := os.ReadFile(sessionFile)
	if err != nil {
		return nil, fmt.Errorf("the recorded session (run from the repository's root): %w", err)
	}
	// Without its promise every iteration continues; with it the first
	// one completes.
	b.session = filepath.Join(work, "session.jsonl")
	b.completing = filepath.Join(work, "session-complete.jsonl")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(b.session, bytes.ReplaceAll(rec, []byte(promise), nil), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(b.completing, rec, 0o644); err != nil {
		return nil, err
	}
	// The stand-in is this program under the name claude.
	bin := filepath.Join(work, "bin")
	os.MkdirAll(bin, 0o755)
	for _, name := range []string{"claude", "git"} {
		link := filepath.Join(bin, name)
		os.Remove(link)
		if err := os.Symlink(self, link); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(b.dir, ".git")); err != nil {
		if err := b.makeProject(); err != nil {
			return nil, fmt.Errorf("make the project: %w", err)
		}
	}
	return b, nil
}

// makeProject writes a committed project of b.files files in 20 packages
// with one git fast-import, then checks it out.
func (b *bench) makeProject() error {
	tmp := b.dir + ".tmp"
	os.RemoveAll(tmp)
	if err := run(tmp, nil, "git", "init", "-q", "-b", "main", tmp); err != nil {
		return err
	}
	var stream bytes.Buffer
	var tree bytes.Buffer
	for i := range b.files {
		content := fmt.Sprintf("package p\n\n// File %d.\nvar X%d = %d\n", i, i, i)
		fmt.Fprintf(&stream, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(content), content)
		fmt.Fprintf(&tree, "M 100644 :%d src/pkg%d/file%d.go\n", i+1, i%20, i)
	}
	// The stand-in writes its log beside its session, outside the
	// project: the sandbox grants that directory. Its task is split by
	// the template, as the stand-in cannot split one.
	work := filepath.Dir(b.session)
	cfg := fmt.Sprintf("[agents.claude]\nbinary = %q\n\n[stall]\nrepeat = 1000000\nno_progress = 1000000\nrepeated_errors = 1000000\n\n[sandbox]\nwrite = [%q]\n\n[task]\nparser = \"template\"\n", filepath.Join(work, "bin", "claude"), work)
	fmt.Fprintf(&stream, "blob\nmark :%d\ndata %d\n%s\n", b.files+1, len(cfg), cfg)
	fmt.Fprintf(&tree, "M 100644 :%d ralph.toml\n", b.files+1)
	msg := "project"
	fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter bench <bench@localhost> 1700000000 +0000\ndata %d\n%s\n%s\n", len(msg), msg, tree.String())
	if err := run(tmp, stream.Bytes(), "git", "fast-import", "--quiet"); err != nil {
		return err
	}
	if err := run(tmp, nil, "git", "reset", "-q", "--hard", "main"); err != nil {
		return err
	}
	if err := run(tmp, nil, b.ralph, "init"); err != nil {
		return err
	}
	return os.Rename(tmp, b.dir)
}

func run(dir string, stdin []byte, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	if _, err := os.Stat(dir); err == nil {
		cmd.Dir = dir
	}
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return nil
}

// writeName is the file the writing stand-in writes in the project.
const writeName = "gap-write.txt"

// runRalph runs one `ralph run` and returns the stand-in's log lines and
// the run's wall time. gitLog, when set, routes git through the wrapper;
// with write, the stand-in writes writeName each time (it is removed
// after the run).
func (b *bench) runRalph(iterations int, session, gitLog string, write bool) ([][2]int64, time.Duration, error) {
	log := filepath.Join(filepath.Dir(b.session), "standin.log")
	os.Remove(log)
	cmd := exec.Command(b.ralph, "run", "--agent", "claude", "--max-iterations", strconv.Itoa(iterations), "measure the gap")
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), envLog+"="+log, envSession+"="+session)
	if write {
		cmd.Env = append(cmd.Env, envWrite+"="+writeName)
		defer os.Remove(filepath.Join(b.dir, writeName))
	}
	if gitLog != "" {
		real, err := exec.LookPath("git")
		if err != nil {
			return nil, 0, err
		}
		cmd.Env = append(cmd.Env, envGitLog+"="+gitLog, envRealGit+"="+real,
			"PATH="+filepath.Join(filepath.Dir(b.session), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || (ee.ExitCode() != 3 && ee.ExitCode() != 0)) {
		return nil, 0, fmt.Errorf("ralph run: %v\n%s", err, out)
	}
	spans, err := readSpans(log)
	return spans, wall, err
}

// How the floor loop starts the stand-in.
const (
	plain      = iota // exec, in a new session
	cold              // proc.Run, re-executing ralph as the supervisor of each start
	persistent        // proc.Run, on the one persistent supervisor
)

// floor spawns the stand-in n times in a loop, as ralph would: the prompt
// on its standard input, its output read to the end, and returns the
// gaps. With how plain it is the floor; through proc.Run (cold,
// persistent) the difference is what starting through ralph's supervisor
// costs.
func (b *bench) floor(n, how int) ([]float64, error) {
	log := filepath.Join(filepath.Dir(b.session), "floor.log")
	os.Remove(log)
	prompt := strings.Repeat("p", 8192)
	env := []string{envLog + "=" + log, envSession + "=" + b.session}
	argv := []string{filepath.Join(filepath.Dir(b.session), "bin", "claude"), "-p", "--output-format", "stream-json", "--verbose"}
	if how != plain {
		proc.SuperviseAs(b.ralph)
		proc.KeepSupervisor(how == persistent)
		defer proc.KeepSupervisor(false)
	}
	for range n {
		if how != plain {
			res, err := proc.Run(context.Background(), proc.Spec{Argv: argv, Dir: b.dir, Env: env, Stdin: strings.NewReader(prompt)})
			if err != nil {
				return nil, err
			}
			if res.ExitCode != 0 {
				return nil, fmt.Errorf("the stand-in exited with %d: %s", res.ExitCode, res.Stderr)
			}
		} else {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = b.dir
			cmd.Env = append(os.Environ(), env...)
			cmd.Stdin = strings.NewReader(prompt)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if _, err := cmd.Output(); err != nil {
				return nil, err
			}
		}
	}
	spans, err := readSpans(log)
	if err != nil {
		return nil, err
	}
	return gaps(spans), nil
}

// childCPU is the user and system time of every child process this one
// has waited for, and of theirs.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func readSpans(path string) ([][2]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spans [][2]int64
	for line := range strings.Lines(string(data)) {
		var s [2]int64
		if _, err := fmt.Sscan(line, &s[0], &s[1]); err == nil {
			spans = append(spans, s)
		}
	}
	return spans, nil
}

// gaps are the times from each span's end to the next one's start, in ms.
func gaps(spans [][2]int64) []float64 {
	var out []float64
	for i := 1; i < len(spans); i++ {
		out = append(out, float64(spans[i][0]-spans[i-1][1])/1e6)
	}
	return out
}

func (b *bench) gap(iterations, rounds int) error {
	before := figure.LoadAvg()
	var ralphGaps, writeGaps, otherGaps, otherWriteGaps, floorGaps, coldGaps, persistentGaps []float64
	var ralphCPU, otherCPU, floorCPU time.Duration
	for range rounds {
		c0 := childCPU()
		spans, _, err := b.runRalph(iterations, b.session, "", false)
		ralphCPU += childCPU() - c0
		if err != nil {
			return err
		}
		if len(spans) != iterations {
			return fmt.Errorf("ralph ran the stand-in %d times, not %d", len(spans), iterations)
		}
		ralphGaps = append(ralphGaps, gaps(spans)...)
		if spans, _, err = b.runRalph(iterations, b.session, "", true); err != nil {
			return err
		}
		writeGaps = append(writeGaps, gaps(spans)...)
		if b.vs != nil {
			c0 := childCPU()
			if spans, _, err = b.vs.runRalph(iterations, b.vs.session, "", false); err != nil {
				return err
			}
			otherCPU += childCPU() - c0
			otherGaps = append(otherGaps, gaps(spans)...)
			if spans, _, err = b.vs.runRalph(iterations, b.vs.session, "", true); err != nil {
				return err
			}
			otherWriteGaps = append(otherWriteGaps, gaps(spans)...)
		}
		c0 = childCPU()
		g, err := b.floor(iterations, plain)
		if err != nil {
			return err
		}
		floorCPU += childCPU() - c0
		floorGaps = append(floorGaps, g...)
		if g, err = b.floor(iterations, cold); err != nil {
			return err
		}
		coldGaps = append(coldGaps, g...)
		if g, err = b.floor(iterations, persistent); err != nil {
			return err
		}
		persistentGaps = append(persistentGaps, g...)
	}
	fmt.Printf("gap between agent sessions, %d files, median of %d gaps each (load average %s before, %s after):\n", b.files, len(ralphGaps), before, figure.LoadAvg())
	r, f := figure.Median(ralphGaps), figure.Median(floorGaps)
	fmt.Printf("  ralph %.2f ms   floor (plain loop, same stand-in) %.2f ms   ralph - floor %.2f ms\n", r, f, r-f)
	w := figure.Median(writeGaps)
	fmt.Printf("  ralph, the stand-in writing one file each iteration: %.2f ms   - floor %.2f ms\n", w, w-f)
	if b.vs != nil {
		fmt.Printf("  -vs %s: %.2f ms   the stand-in writing one file: %.2f ms\n", b.vs.ralph, figure.Median(otherGaps), figure.Median(otherWriteGaps))
	}
	// CPU time (user and system, every process included) holds steadier
	// than wall time when the machine is loaded.
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(rounds*iterations) }
	fmt.Printf("  CPU per iteration, the stand-in and every process ralph starts included: ralph %.2f ms   floor %.2f ms", per(ralphCPU), per(floorCPU))
	if b.vs != nil {
		fmt.Printf("   -vs %.2f ms", per(otherCPU))
	}
	fmt.Println()
	sup := [2]float64{figure.Median(coldGaps) - f, figure.Median(persistentGaps) - f}
	if err := b.composition(iterations, sup, false); err != nil {
		return err
	}
	return b.composition(iterations, sup, true)
}

// composition runs ralph once more with git behind the logging wrapper and
// prints the git processes that fall between two agent sessions.
// sup is what starting through ralph's supervisor costs over the floor:
// cold, and on the persistent supervisor.
func (b *bench) composition(iterations int, sup [2]float64, write bool) error {
	gitLog := filepath.Join(filepath.Dir(b.session), "git.log")
	os.Remove(gitLog)
	spans, _, err := b.runRalph(iterations, b.session, gitLog, write)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(gitLog)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	type stat struct {
		n  int
		ms float64
	}
	by := map[string]*stat{}
	total := 0
	for line := range strings.Lines(string(data)) {
		var start, end int64
		var sub string
		if _, err := fmt.Sscan(line, &start, &end, &sub); err != nil {
			continue
		}
		// Only git run inside a gap: after the first session's end, before
		// the last one's start.
		for i := 1; i < len(spans); i++ {
			if start >= spans[i-1][1] && end <= spans[i][0] {
				if by[sub] == nil {
					by[sub] = &stat{}
				}
				by[sub].n++
				by[sub].ms += float64(end-start) / 1e6
				total++
				break
			}
		}
	}
	n := float64(len(spans) - 1)
	what := "the stand-in changing nothing"
	if write {
		what = "the stand-in writing one file"
	}
	fmt.Printf("  what a gap holds (one more run, %s, git behind a logging wrapper): %.1f git processes per gap\n", what, float64(total)/n)
	var subs []string
	for s := range by {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, c string) int { return strings.Compare(a, c) })
	for _, s := range subs {
		fmt.Printf("    git %-14s %4.1f per gap, %6.2f ms per gap\n", s, float64(by[s].n)/n, by[s].ms/n)
	}
	if write {
		return nil
	}
	fmt.Printf("    starting the agent through ralph's supervisor (the same loop through proc.Run, less the floor): %.2f ms per gap on the persistent supervisor (ralph's way); cold %.2f ms (each start re-executing ralph)\n", sup[1], sup[0])
	fmt.Printf("    the rest: ralph's own work in-process (store, .ralph/ files, prompt, stall tracker, guard reads)\n")
	return nil
}

func (b *bench) taskCost(rounds int) error {
	before := figure.LoadAvg()
	var ralphCost, otherCost, gitCost []float64
	for i := range rounds {
		c, err := b.oneTask(i)
		if err != nil {
			return err
		}
		ralphCost = append(ralphCost, c)
		if b.vs != nil {
			// The other binary in the same round, on its own copy of
			// the project.
			if c, err = b.vs.oneTask(i); err != nil {
				return err
			}
			otherCost = append(otherCost, c)
			// Committed, untimed, as the git step below commits this
			// project: both start each round from a clean tree.
			if err := run(b.vs.dir, nil, "sh", "-c", "git add -A && git -c user.name=bench -c user.email=bench@localhost commit -q -m change"); err != nil {
				return err
			}
		}

		change := filepath.Join(b.dir, "src", "pkg0", "file0.go")
		appendLine(change, fmt.Sprintf("// git round %d", i))
		t0 := time.Now()
		if err := run(b.dir, nil, "sh", "-c", "git add -A && git -c user.name=bench -c user.email=bench@localhost commit -q -m change"); err != nil {
			return err
		}
		gitCost = append(gitCost, float64(time.Since(t0))/1e6)
	}
	r, g := figure.Median(ralphCost), figure.Median(gitCost)
	fmt.Printf("task fixed cost, %d files, median of %d (load average %s before, %s after):\n", b.files, rounds, before, figure.LoadAvg())
	fmt.Printf("  ralph run of one completing iteration, less the agent: %.0f ms   git add -A && git commit of one change: %.0f ms   ratio %.2f\n", r, g, r/g)
	if b.vs != nil {
		o := figure.Median(otherCost)
		fmt.Printf("  -vs %s: %.0f ms   ratio %.2f\n", b.vs.ralph, o, o/g)
	}
	return nil
}

// oneTask changes one file of the project and runs ralph for a task of
// one completing iteration, and returns its time less the agent's (ms).
func (b *bench) oneTask(round int) (float64, error) {
	// One changed file: ralph's task snapshots it, as git commits it.
	appendLine(filepath.Join(b.dir, "src", "pkg0", "file0.go"), fmt.Sprintf("// ralph round %d", round))
	spans, wall, err := b.runRalph(1, b.completing, "", false)
	if err != nil {
		return 0, err
	}
	if len(spans) != 1 {
		return 0, fmt.Errorf("ralph ran the stand-in %d times, not once", len(spans))
	}
	agent := time.Duration(spans[0][1] - spans[0][0])
	return float64(wall-agent) / 1e6, nil
}

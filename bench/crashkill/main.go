//go:build unix

// Command crashkill measures what ralph makes of a command killed with
// SIGKILL at a uniformly random moment, as a user's machine would do it,
// for four commands (modes):
//
//	run       ralph run, continued by ralph resume
//	worktree  ralph run --worktree, continued by ralph resume, which lands it
//	rollback  ralph snapshot rollback task-1-pre, done again
//	specs     ralph specs run, run again
//
// For each round it makes a fresh git repository with scripted agents
// (shell actions, writes, short sleeps; a quality gate that starts a
// server with setsid and lets go of it, as a dev server does), starts the
// real ralph binary, kills it — half the rounds ralph alone, half its
// whole process group, its own git children included — runs the command
// that continues, and sorts the round into one of:
//
//	completed    the continuation exited 0 and the work is whole
//	unresumable  the continuation failed, or said there was nothing to
//	             resume although the killed command had begun
//	integrity    the continuation exited 0 but the result is wrong: the
//	             database fails PRAGMA integrity_check or its search
//	             index its own, git fsck finds an object missing, task or iteration
//	             numbers have a gap or a repeat, the task did not land
//	             once, the tree is not the snapshot's, the spec's work was
//	             done twice
//
// and, independently, counts the rounds that left orphans: processes
// started in the repository (by ralph, its agents, gates or git) still
// running once the continuation has ended.
//
//	go run ./bench/crashkill -ralph PATH [-rounds 20] [-modes run,worktree,rollback,specs]
//
// The kill moment is drawn from [0, one unbroken run of the mode's
// command); -window overrides it for every mode.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

const message = "build a landing page for the crash bench"

// gate starts a server with setsid that lets go of the output, then
// passes: ralph must end the server with the gate, or, when it was killed
// during the gate, on the next resume.
const ralphTOML = `[[gates]]
name = "dev-server"
run = ["sh", "-c", "setsid sleep 120 </dev/null >/dev/null 2>&1 & sleep 0.1"]
timeout = "30s"

[specs]
backoff = "0s"
`

var files = map[string]string{
	"ralph.toml": ralphTOML,
	"agent.json": `{"iterations": [
  {"actions": [{"tool": "shell", "argv": ["sh", "-c", "echo it1; ls; sleep 0.1"]}, {"tool": "shell", "argv": ["cp", "valid.tsx", ".ralph/plan.tsx"]}, {"tool": "sleep", "seconds": 0.1}], "final": "I wrote the plan."},
  {"actions": [{"tool": "write", "path": "src/sections/HeroSection.tsx", "content": "export const Hero = () => <h1>Hello</h1>\n"}, {"tool": "shell", "argv": ["sh", "-c", "echo it2; ls src | wc -l; sleep 0.2"]}, {"tool": "write", "path": "src/App.tsx", "content": "import { Hero } from './sections/HeroSection'\n\nexport default function App() {\n  return <main><Hero /></main>\n}\n"}], "final": "built the hero"},
  {"actions": [{"tool": "sleep", "seconds": 0.1}, {"tool": "write", "path": "src/sections/HeroSection.tsx", "content": "export const Hero = () => <h1>Hello</h1>\n"}, {"tool": "write", "path": "src/App.tsx", "content": "import { Hero } from './sections/HeroSection'\n\nexport default function App() {\n  return <main><Hero /></main>\n}\n"}, {"tool": "write", "path": ".ralph/summary.md", "content": "Built the landing page\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
]}`,
	"valid.tsx": `<App name="Tideline">
  <Theme mood="northern-lights" />
  <Screen name="home">
    <Section gumdrop="hero" />
    <Section gumdrop="features" />
    <Section gumdrop="cta" />
  </Screen>
</App>
`,
	// The spec agent plays every role of the spec pipeline, as a model
	// that follows its prompt would: the implementer appends its line to
	// foo.txt unless it is told that an interrupted attempt of its own did
	// the work, in which case it commits what is left.
	"specs/0001-foo.md": "# Foo\n\nAdd the line foo to foo.txt.\n",
	"foo.txt":           "lines:\n",
	"spec-agent.sh": `prompt=$(cat)
case "$(cat "$RALPH_SYSTEM_PROMPT_FILE")" in
*PLANNER*)
	mkdir -p specs/plans
	printf '# Plan\n1. add the line foo to foo.txt\n' > specs/plans/0001-foo.md
	sleep 0.1
	echo '<promise>COMPLETE</promise>' ;;
*IMPLEMENTER*)
	case "$prompt" in
	*"was interrupted"*) ;;
	*) echo foo >> foo.txt; sleep 0.1 ;;
	esac
	git add foo.txt && git commit -qm "implement foo" >/dev/null 2>&1
	sleep 0.2
	echo '<promise>COMPLETE</promise>' ;;
*VERIFIER*)
	sleep 0.1
	printf 'foo is there.\n<promise>PASS</promise>\n' ;;
esac
`,
}

// mode is one command to kill and the command that continues it.
type mode struct {
	name string
	// setup readies a fresh project for the command.
	setup func(ralph, dir string) error
	// command is killed; resume continues it.
	command, resume []string
	// begun reports whether the killed command left anything to
	// continue; when not, the continuation must say there is nothing.
	begun func(dir string) bool
	// check looks at the result of a continuation that exited 0.
	check func(dir string) []string
}

var identity = []string{
	"GIT_AUTHOR_NAME=crash bench", "GIT_AUTHOR_EMAIL=bench@ralph.invalid",
	"GIT_COMMITTER_NAME=crash bench", "GIT_COMMITTER_EMAIL=bench@ralph.invalid",
}

var modes = []mode{
	{
		name:    "run",
		command: []string{"run", "--script", "agent.json", message},
		resume:  []string{"resume"},
		begun:   wroteState,
		check:   checkTask,
	},
	{
		name:    "worktree",
		setup:   func(_, dir string) error { return commitAll(dir) },
		command: []string{"run", "--worktree", "--script", "agent.json", message},
		resume:  []string{"resume"},
		begun:   wroteState,
		check:   checkLanded,
	},
	{
		name: "rollback",
		setup: func(ralph, dir string) error {
			if out, err := ralphIn(dir, ralph, "run", "--script", "agent.json", message); err != nil {
				return fmt.Errorf("the run to roll back: %v\n%s", err, out)
			}
			return nil
		},
		command: []string{"snapshot", "rollback", "task-1-pre"},
		resume:  []string{"snapshot", "rollback", "task-1-pre"},
		begun:   func(string) bool { return true },
		check:   checkRolledBack,
	},
	{
		name:    "specs",
		setup:   func(_, dir string) error { return commitAll(dir) },
		command: []string{"specs", "run", "--agent", "command", "--command", "sh spec-agent.sh"},
		resume:  []string{"specs", "run", "--agent", "command", "--command", "sh spec-agent.sh"},
		begun:   func(string) bool { return true },
		check:   checkSpec,
	},
}

func main() {
	ralph := flag.String("ralph", "", "path of the ralph binary")
	rounds := flag.Int("rounds", 20, "kills to make per mode")
	window := flag.Duration("window", 0, "draw the kill moment from [0, window); 0 means one unbroken run's length, per mode")
	only := flag.String("modes", "run,worktree,rollback,specs", "modes to measure, comma-separated")
	flag.Parse()
	if *ralph == "" {
		fmt.Fprintln(os.Stderr, "crashkill: -ralph PATH is required")
		os.Exit(2)
	}
	for _, name := range strings.Split(*only, ",") {
		m, ok := find(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "crashkill: no mode %q\n", name)
			os.Exit(2)
		}
		if err := measure(*ralph, m, *rounds, *window); err != nil {
			fmt.Fprintf(os.Stderr, "crashkill: %s: %v\n", m.name, err)
			os.Exit(1)
		}
	}
}

func find(name string) (mode, bool) {
	for _, m := range modes {
		if m.name == strings.TrimSpace(name) {
			return m, true
		}
	}
	return mode{}, false
}

// tally counts what the rounds of one mode came to.
type tally struct {
	completed, notBegun, unresumable, integrity, orphanRounds, orphans int
	examples                                                           map[string]string
	took                                                               []time.Duration
}

func (t *tally) example(kind string, round int, at time.Duration, group bool, p string) {
	if _, ok := t.examples[kind]; !ok {
		t.examples[kind] = fmt.Sprintf("round %d, %s killed at %s: %s", round, killed(group), at.Round(time.Millisecond), p)
	}
}

func killed(group bool) string {
	if group {
		return "its group"
	}
	return "ralph"
}

func measure(ralph string, m mode, rounds int, window time.Duration) error {
	if window == 0 {
		dir, err := project(ralph, m)
		if err != nil {
			return err
		}
		start := time.Now()
		out, err := ralphIn(dir, ralph, m.command...)
		window = time.Since(start)
		endLeftovers(dir)
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("unbroken run: %v\n%s", err, out)
		}
	}
	t := &tally{examples: map[string]string{}}
	for i := range rounds {
		at := time.Duration(rand.Int64N(int64(window)))
		group := i%2 == 1
		if err := round(ralph, m, at, group, i+1, t); err != nil {
			return err
		}
	}
	fmt.Printf("%-8s %d rounds, kill moment uniform in [0, %s), half ralph alone, half its process group\n", m.name, rounds, window.Round(time.Millisecond))
	fmt.Printf("  completed    %3d of %d (%d killed before they began anything, rightly nothing to resume)\n", t.completed, rounds, t.notBegun)
	for _, row := range []struct {
		kind string
		n    int
	}{{"unresumable", t.unresumable}, {"integrity", t.integrity}, {"orphans", t.orphanRounds}} {
		extra := ""
		if row.kind == "orphans" {
			extra = fmt.Sprintf(" (%d processes)", t.orphans)
		}
		fmt.Printf("  %-12s %3d of %d%s\n", row.kind, row.n, rounds, extra)
		if e, ok := t.examples[row.kind]; ok {
			fmt.Printf("    e.g. %s\n", e)
		}
	}
	if len(t.took) > 0 {
		sort.Slice(t.took, func(i, j int) bool { return t.took[i] < t.took[j] })
		fmt.Printf("  continuation wall time: median %s, max %s\n", t.took[len(t.took)/2].Round(time.Millisecond), t.took[len(t.took)-1].Round(time.Millisecond))
	}
	return nil
}

// round kills m's command at moment at, continues it and counts the
// result in t.
func round(ralph string, m mode, at time.Duration, group bool, n int, t *tally) error {
	dir, err := project(ralph, m)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	defer endLeftovers(dir)
	cmd := exec.Command(ralph, m.command...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	time.Sleep(at)
	if group {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	} else {
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	_ = cmd.Wait()
	begun := m.begun(dir)

	start := time.Now()
	out, err := ralphIn(dir, ralph, m.resume...)
	took := time.Since(start)
	var ee *exec.ExitError
	switch {
	case !begun && strings.Contains(out, "nothing to resume"):
		t.completed++
		t.notBegun++
	case strings.Contains(out, "nothing to resume") && !strings.Contains(out, "(completed:"):
		t.unresumable++
		t.example("unresumable", n, at, group, firstLine(out))
	case strings.Contains(out, "nothing to resume"):
		// Killed after it completed: nothing was left to do.
		t.took = append(t.took, took)
		countChecked(t, m, dir, n, at, group)
	case errors.As(err, &ee):
		t.unresumable++
		// ProcessState says "exit status N" or, for a death by a signal
		// (ExitCode -1), which signal.
		t.example("unresumable", n, at, group, fmt.Sprintf("%s: %s", ee.ProcessState, lastLine(out)))
	case err != nil:
		return err
	default:
		t.took = append(t.took, took)
		countChecked(t, m, dir, n, at, group)
	}
	if left := leftovers(dir); len(left) > 0 {
		t.orphanRounds++
		t.orphans += len(left)
		t.example("orphans", n, at, group, strings.Join(left, ", "))
	}
	return nil
}

// countChecked counts a round whose continuation ended well as completed
// or, when m's check finds the result wrong, as an integrity failure.
func countChecked(t *tally, m mode, dir string, n int, at time.Duration, group bool) {
	if problems := m.check(dir); len(problems) > 0 {
		t.integrity++
		t.example("integrity", n, at, group, strings.Join(problems, "; "))
		return
	}
	t.completed++
}

// wroteState reports whether the killed run wrote anything in .ralph/
// but its lock and files not yet renamed into place.
func wroteState(dir string) bool {
	entries, _ := os.ReadDir(filepath.Join(dir, ".ralph"))
	for _, e := range entries {
		// The lock, and a file written but not yet renamed into place
		// (".request.json.tmp…"), are no state a resume could take up.
		if n := e.Name(); n != "ralph.lock" && !(strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp")) {
			return true
		}
	}
	return false
}

// checkDB opens the workspace's store and checks it; the caller closes it.
func checkDB(dir string) (*store.Store, []string) {
	ctx := context.Background()
	path := filepath.Join(dir, ".ralph", "ralph.db")
	if _, err := os.Stat(path); err != nil {
		return nil, []string{"no database"}
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, []string{"open: " + err.Error()}
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		return st, []string{"integrity_check: " + err.Error()}
	}
	// The search index is caught up after events are committed, and
	// the last ralph to close the store left it whole: the index holds
	// every event (rank 1: checked against the table).
	if err := st.CheckSearchIndex(ctx); err != nil {
		return st, []string{err.Error()}
	}
	return st, nil
}

// checkStores checks the workspace's store (checkDB) and the
// repository's objects (checkObjects).
func checkStores(dir string) []string {
	st, problems := checkDB(dir)
	if st != nil {
		st.Close()
	}
	return append(problems, checkObjects(dir)...)
}

// checkObjects runs git fsck: every object a ref reaches is there (the
// iterations' trees and commits are written behind the loop).
func checkObjects(dir string) []string {
	cmd := exec.Command("git", "fsck", "--no-dangling", "--no-progress")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return []string{"git fsck: " + first}
	}
	return nil
}

// checkTask looks at the workspace after a resumed ralph run.
func checkTask(dir string) []string {
	problems := checkRecords(dir)
	if origin, _ := os.ReadFile(filepath.Join(dir, ".ralph", "origin.md")); string(origin) != message+"\n" {
		problems = append(problems, fmt.Sprintf("origin.md: %q", origin))
	}
	return problems
}

// checkRecords checks the store: sound, one task, completed, its
// iterations numbered 1, 2, … without a gap or a repeat.
func checkRecords(dir string) []string {
	ctx := context.Background()
	st, problems := checkDB(dir)
	problems = append(problems, checkObjects(dir)...)
	if st == nil {
		return problems
	}
	defer st.Close()
	tasks, err := st.Tasks(ctx)
	if err != nil || len(tasks) != 1 || tasks[0].Number != 1 {
		return append(problems, fmt.Sprintf("task numbers: %d tasks (%v)", len(tasks), err))
	}
	if tasks[0].Reason != "completed" {
		problems = append(problems, fmt.Sprintf("not completed: %s %s", tasks[0].Status, tasks[0].Reason))
	}
	its, _ := st.Iterations(ctx, tasks[0].ID)
	for i, it := range its {
		if it.Number != i+1 {
			var ns []int
			for _, it := range its {
				ns = append(ns, it.Number)
			}
			problems = append(problems, fmt.Sprintf("iteration numbers: %v", ns))
			break
		}
	}
	return problems
}

// checkLanded looks at the repository after a resumed ralph run
// --worktree: the task completed and landed once, its worktree and branch
// are gone. (origin.md was the worktree's own.)
func checkLanded(dir string) []string {
	problems := checkRecords(dir)
	subjects := git(dir, "log", "--format=%s")
	if n := strings.Count(subjects, "ralph task 1: "); n != 1 {
		problems = append(problems, fmt.Sprintf("the task landed %d times", n))
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "App.tsx")); err != nil {
		problems = append(problems, "the task's files are not in the main tree")
	}
	if b := strings.TrimSpace(git(dir, "branch", "--list", "ralph/*")); b != "" {
		problems = append(problems, "branch kept: "+b)
	}
	return problems
}

// checkRolledBack looks at the tree after a rollback to task-1-pre: it
// holds the project's files as they were before the task, nothing else.
func checkRolledBack(dir string) []string {
	problems := checkStores(dir)
	got := map[string]string{}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		if err != nil || rel == ".git" || rel == ".ralph" {
			if d != nil && d.IsDir() && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(path)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	for name, want := range files {
		if got[name] != want {
			problems = append(problems, name+" is not as it was before the task")
		}
		delete(got, name)
	}
	for name := range got {
		problems = append(problems, name+" is left from the task")
	}
	sort.Strings(problems)
	return problems
}

// checkSpec looks at the repository after ralph specs run was run again:
// the spec is done and its work was done once (one line, one commit).
func checkSpec(dir string) []string {
	problems := checkStores(dir)
	if _, err := os.Stat(filepath.Join(dir, "specs", "done", "0001-foo.md")); err != nil {
		problems = append(problems, "the spec is not done")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "foo.txt")); string(data) != "lines:\nfoo\n" {
		problems = append(problems, fmt.Sprintf("the work was done twice: foo.txt = %q", data))
	}
	if n := strings.Count(git(dir, "log", "--format=%s"), "implement foo"); n != 1 {
		problems = append(problems, fmt.Sprintf("the work was committed %d times", n))
	}
	return problems
}

// leftovers lists the processes still running in dir (by their working
// directory): an agent, a gate, the server it started, a git.
func leftovers(dir string) []string {
	var out []string
	for _, pid := range inDir(dir) {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		out = append(out, fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))))
	}
	return out
}

// endLeftovers kills what leftovers finds, so no round disturbs the next.
func endLeftovers(dir string) {
	for _, pid := range inDir(dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// inDir lists the live processes whose working directory is dir or
// below it.
func inDir(dir string) []int {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || (cwd != real && !strings.HasPrefix(cwd, real+"/")) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			s := string(stat)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// project makes a fresh repository for m.
func project(ralph string, m mode) (string, error) {
	dir, err := os.MkdirTemp("", "crashkill-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git init: %v: %s", err, out)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	if m.setup != nil {
		if err := m.setup(ralph, dir); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// commitAll commits the project, which ralph run --worktree and ralph
// specs run need.
func commitAll(dir string) error {
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "the project"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), identity...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}

func git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, _ := cmd.Output()
	return string(out)
}

func ralphIn(dir, ralph string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ralph, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), identity...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// Command crashkill measures what `ralph resume` makes of a `ralph run`
// killed with SIGKILL at a uniformly random moment, as a user's machine
// would do it: for each round it makes a fresh git repository with a
// scripted agent (shell actions, writes, short sleeps, PLAN then BUILD;
// its last iteration writes every file again, as a real agent would redo
// work a kill lost, so that any resume can finish),
// starts the real ralph binary, kills it, runs `ralph resume` and checks
// the result: the resume exits 0 with the task completed, the database
// passes PRAGMA integrity_check, task and iteration numbers have no gap or
// repeat, and origin.md is the task's message. It prints how many rounds
// failed each check.
//
//	go run ./bench/crashkill -ralph PATH [-rounds 200] [-window 0]
//
// -window is the span the kill moment is drawn from; 0 measures one
// unbroken run first and uses its length.
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
	"strings"
	"syscall"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

const message = "build a landing page for the crash bench"

var files = map[string]string{
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
}

func main() {
	ralph := flag.String("ralph", "", "path of the ralph binary")
	rounds := flag.Int("rounds", 200, "kills to make")
	window := flag.Duration("window", 0, "draw the kill moment from [0, window); 0 means one unbroken run's length")
	flag.Parse()
	if *ralph == "" {
		fmt.Fprintln(os.Stderr, "crashkill: -ralph PATH is required")
		os.Exit(2)
	}
	if err := run(*ralph, *rounds, *window); err != nil {
		fmt.Fprintln(os.Stderr, "crashkill:", err)
		os.Exit(1)
	}
}

func run(ralph string, rounds int, window time.Duration) error {
	if window == 0 {
		dir, err := project()
		if err != nil {
			return err
		}
		start := time.Now()
		if out, err := ralphIn(dir, ralph, "run", "--script", "agent.json", message); err != nil {
			return fmt.Errorf("unbroken run: %v\n%s", err, out)
		}
		window = time.Since(start)
		os.RemoveAll(dir)
	}
	fmt.Printf("%d rounds, kill moment uniform in [0, %s)\n", rounds, window.Round(time.Millisecond))
	failures := map[string]int{}
	examples := map[string]string{}
	var resumeTimes []time.Duration
	for i := range rounds {
		at := time.Duration(rand.Int64N(int64(window)))
		problems, took, err := round(ralph, at)
		if err != nil {
			return err
		}
		if took > 0 {
			resumeTimes = append(resumeTimes, took)
		}
		for _, p := range problems {
			kind, _, _ := strings.Cut(p, ":")
			failures[kind]++
			if _, ok := examples[kind]; !ok {
				examples[kind] = fmt.Sprintf("round %d, killed at %s: %s", i+1, at.Round(time.Millisecond), p)
			}
		}
	}
	fmt.Printf("  killed before ralph wrote anything but its lock (resume rightly says nothing to resume): %d of %d\n", failures["not begun"], rounds)
	sort.Slice(resumeTimes, func(i, j int) bool { return resumeTimes[i] < resumeTimes[j] })
	checks := []string{"resume failed", "nothing to resume", "not completed", "integrity", "task numbers", "iteration numbers", "origin.md"}
	for _, c := range checks {
		fmt.Printf("  %-18s %d of %d\n", c, failures[c], rounds)
		if e, ok := examples[c]; ok {
			fmt.Printf("    e.g. %s\n", e)
		}
	}
	fmt.Printf("  resume wall time: median %s, max %s\n", resumeTimes[len(resumeTimes)/2].Round(time.Millisecond), resumeTimes[len(resumeTimes)-1].Round(time.Millisecond))
	return nil
}

// round kills one run at moment at, resumes it and returns what is wrong.
func round(ralph string, at time.Duration) ([]string, time.Duration, error) {
	dir, err := project()
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(ralph, "run", "--script", "agent.json", message)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	time.Sleep(at)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if !begun(dir) {
		// Killed before it wrote anything but its lock: there is nothing
		// a resume could continue.
		out, _ := ralphIn(dir, ralph, "resume")
		if !strings.Contains(out, "nothing to resume") {
			return []string{"resume failed: before ralph began: " + firstLine(out)}, 0, nil
		}
		return []string{"not begun"}, 0, nil
	}

	start := time.Now()
	out, err := ralphIn(dir, ralph, "resume")
	took := time.Since(start)
	var problems []string
	var ee *exec.ExitError
	switch {
	case strings.Contains(out, "nothing to resume"):
		// A run killed after it completed has nothing left to do.
		if !strings.Contains(out, "(completed:") {
			problems = append(problems, "nothing to resume: "+firstLine(out))
		}
	case errors.As(err, &ee):
		problems = append(problems, fmt.Sprintf("resume failed: exit %d: %s", ee.ExitCode(), lastLine(out)))
	case err != nil:
		return nil, 0, err
	}
	problems = append(problems, check(dir)...)
	return problems, took, nil
}

// begun reports whether the killed run wrote anything in .ralph/ but
// its lock.
func begun(dir string) bool {
	entries, _ := os.ReadDir(filepath.Join(dir, ".ralph"))
	for _, e := range entries {
		if e.Name() != "ralph.lock" {
			return true
		}
	}
	return false
}

// check looks at the workspace after the resume.
func check(dir string) []string {
	ctx := context.Background()
	path := filepath.Join(dir, ".ralph", "ralph.db")
	if _, err := os.Stat(path); err != nil {
		return []string{"not completed: no database"}
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return []string{"integrity: open: " + err.Error()}
	}
	defer st.Close()
	var problems []string
	if err := st.IntegrityCheck(ctx); err != nil {
		problems = append(problems, "integrity: "+err.Error())
	}
	tasks, err := st.Tasks(ctx)
	if err != nil || len(tasks) != 1 || tasks[0].Number != 1 {
		problems = append(problems, fmt.Sprintf("task numbers: %d tasks (%v)", len(tasks), err))
		return problems
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
	if origin, _ := os.ReadFile(filepath.Join(dir, ".ralph", "origin.md")); string(origin) != message+"\n" {
		problems = append(problems, fmt.Sprintf("origin.md: %q", origin))
	}
	return problems
}

func project() (string, error) {
	dir, err := os.MkdirTemp("", "crashkill-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git init: %v: %s", err, out)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func ralphIn(dir, ralph string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ralph, args...)
	cmd.Dir = dir
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

package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/pausepoint"
	"github.com/ralph-harness/ralph/internal/store"
)

// The crash project: task 1 writes a plan in iteration 1, builds in
// iteration 2 once the harness has validated it, and completes in
// iteration 3 (writing the hero and App.tsx again, as an agent redoes what a
// killed iteration may have left unwritten, so build-succeeds passes); task 2 is a bug fix that builds in iteration 1 and completes
// in iteration 2. Every shell action is argv, never a shell string.
const (
	crashTask1 = "build a landing page for the crash test"
	crashTask2 = "fix the wrong hero heading"
)

var crashFiles = map[string]string{
	"agent.json": `{"iterations": [
  {"actions": [{"tool": "shell", "argv": ["cp", "valid.tsx", ".ralph/plan.tsx"]}], "final": "I wrote the plan."},
  {"actions": [{"tool": "write", "path": "src/sections/HeroSection.tsx", "content": "export const Hero = () => <h1>Helo</h1>\n"}, {"tool": "write", "path": "src/App.tsx", "content": "import { Hero } from './sections/HeroSection'\n\nexport default function App() {\n  return <main><Hero /></main>\n}\n"}], "final": "built the hero"},
  {"actions": [{"tool": "write", "path": "src/sections/HeroSection.tsx", "content": "export const Hero = () => <h1>Helo</h1>\n"}, {"tool": "write", "path": "src/App.tsx", "content": "import { Hero } from './sections/HeroSection'\n\nexport default function App() {\n  return <main><Hero /></main>\n}\n"}, {"tool": "write", "path": ".ralph/summary.md", "content": "Built the landing page\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
]}`,
	"agent2.json": `{"iterations": [
  {"actions": [{"tool": "write", "path": "src/sections/HeroSection.tsx", "content": "export const Hero = () => <h1>Hello</h1>\n"}], "final": "fixed the heading"},
  {"actions": [{"tool": "write", "path": ".ralph/summary.md", "content": "Fixed the hero heading\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
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

// crashRepo is a git repository holding the crash project's files.
func crashRepo(t *testing.T) string {
	t.Helper()
	dir := gitRepo(t)
	for name, content := range crashFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ralphCmd runs the real ralph binary in dir to its end and returns its
// output and exit code.
func ralphCmd(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("ralph %v: %v\n%s", args, err, out)
	return "", -1
}

// runUntilPaused starts `ralph run` with the pause seam set to point,
// waits until the process reports it has reached it, and kills it there
// with SIGKILL.
func runUntilPaused(t *testing.T, bin, dir, point string, args ...string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "paused")
	cmd := exec.Command(bin, append([]string{"run"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RALPH_TEST_PAUSE="+point, "RALPH_TEST_PAUSE_FILE="+marker)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("ralph run ended (%v) before it reached %s:\n%s", err, point, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("ralph run never reached %s:\n%s", point, out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("ralph run was not killed: %v\n%s", err, out.String())
	}
}

// dbRows lists the rowids of every table of the workspace's database but
// state (whose keys come and go by design) and the events' full-text
// index (derived from events), as "table:rowid"; nil when the database
// does not exist.
func dbRows(t *testing.T, dir string) []string {
	t.Helper()
	path := filepath.Join(dir, ".ralph", "ralph.db")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db := openDB(t, dir)
	defer db.Close()
	var tables []string
	rows, err := db.DB().Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'state' AND name NOT LIKE 'events_fts%'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var out []string
	for _, table := range tables {
		ids := queryStrings(t, db.DB(), `SELECT rowid FROM `+table)
		for _, id := range ids {
			out = append(out, table+":"+id)
		}
	}
	return out
}

func openDB(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, ".ralph", "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func queryStrings(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func readState(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".ralph", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// checkFinished checks the workspace after the last task completed: the
// database is sound, tasks is every task's message in number order, each
// completed with iterations numbered 1, 2, … and its pre and post
// snapshots on record once each, and the files of .ralph/ agree.
func checkFinished(t *testing.T, dir string, tasks []string) {
	t.Helper()
	ctx := context.Background()
	st := openDB(t, dir)
	defer st.Close()
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := st.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(tasks) {
		t.Fatalf("%d tasks on record, want %d: %+v", len(all), len(tasks), all)
	}
	var lastIt int
	for i, task := range all {
		if task.Number != i+1 || task.Message != tasks[i] {
			t.Errorf("task %d on record is number %d %q, want number %d %q", i+1, task.Number, task.Message, i+1, tasks[i])
		}
		if task.Status != store.TaskDone || task.Reason != "completed" {
			t.Errorf("task %d ended %s/%s (%s), want done/completed", task.Number, task.Status, task.Reason, task.Detail)
		}
		its, err := st.Iterations(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var numbers []int
		for j, it := range its {
			numbers = append(numbers, it.Number)
			if it.Number != j+1 {
				t.Errorf("task %d iterations are %v: not 1, 2, … without a gap", task.Number, numbers)
				break
			}
		}
		if len(its) == 0 {
			t.Errorf("task %d has no iterations", task.Number)
		} else if out := its[len(its)-1].Outcome; out != "completed" {
			t.Errorf("task %d's last iteration ended %q, want completed", task.Number, out)
		}
		lastIt = len(its)
		for _, name := range []string{fmt.Sprintf("task-%d-pre", task.Number), fmt.Sprintf("task-%d-post", task.Number)} {
			if n := len(queryStrings(t, st.DB(), `SELECT name FROM snapshots WHERE name = ?`, name)); n != 1 {
				t.Errorf("snapshot %s is on record %d times, want once", name, n)
			}
		}
	}
	if dups := queryStrings(t, st.DB(), `SELECT name FROM snapshots WHERE name GLOB 'task-*-p*-*'`); len(dups) > 0 {
		t.Errorf("a task snapshot was saved twice: %v", dups)
	}
	if got, want := readState(t, dir, "origin.md"), tasks[0]+"\n"; got != want {
		t.Errorf("origin.md = %q, want the first task's message %q", got, want)
	}
	if got, want := strings.TrimSpace(readState(t, dir, "task-counter.txt")), fmt.Sprint(len(tasks)); got != want {
		t.Errorf("task-counter.txt = %s, want %s", got, want)
	}
	if got, want := strings.TrimSpace(readState(t, dir, "iteration.txt")), fmt.Sprint(lastIt); got != want {
		t.Errorf("iteration.txt = %s, want %s", got, want)
	}
	history := readState(t, dir, "task-history.md")
	for n := 1; n < len(tasks); n++ {
		if c := strings.Count(history, fmt.Sprintf("- Task %d: ", n)); c != 1 {
			t.Errorf("task-history.md has %d lines for task %d, want 1:\n%s", c, n, history)
		}
	}
}

// A real `ralph run` is killed with SIGKILL at each point of a task's
// life (stopped there by the pausepoint seam, so the point is exact), and
// `ralph resume` then finishes the task: the database is sound, no row
// written before the kill is lost, task and iteration numbers run on
// without a gap or a repeat, and origin.md, the counter, the history and
// the snapshots are what an unbroken run leaves. The task-2 cases check
// the numbering across tasks.
func TestKillAnywhereThenResume(t *testing.T) {
	bin := buildRalph(t)
	type crashCase struct {
		point string
		task  int
	}
	var cases []crashCase
	for _, p := range []string{
		pausepoint.RequestWritten, pausepoint.TaskRecorded, pausepoint.TaskPreSnapshot,
		pausepoint.TaskCounter, pausepoint.TaskWritten,
		pausepoint.IterationFile + "@2", pausepoint.PlanValidation,
		pausepoint.AgentEvent + "@2", pausepoint.Gates, pausepoint.PostSnapshot,
	} {
		cases = append(cases, crashCase{p, 1})
	}
	for _, p := range []string{
		pausepoint.RequestWritten, pausepoint.TaskRecorded, pausepoint.TaskPreSnapshot,
		pausepoint.TaskCounter, pausepoint.TaskWritten, pausepoint.IterationFile + "@2",
		pausepoint.AgentEvent, pausepoint.Gates, pausepoint.PostSnapshot,
	} {
		cases = append(cases, crashCase{p, 2})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("task%d/%s", tc.task, tc.point), func(t *testing.T) {
			t.Parallel()
			dir := crashRepo(t)
			tasks := []string{crashTask1}
			args := []string{"--script", "agent.json", crashTask1}
			if tc.task == 2 {
				if out, code := ralphCmd(t, bin, dir, "run", "--script", "agent.json", crashTask1); code != 0 {
					t.Fatalf("task 1: exit %d\n%s", code, out)
				}
				tasks = append(tasks, crashTask2)
				args = []string{"--script", "agent2.json", crashTask2}
			}
			runUntilPaused(t, bin, dir, tc.point, args...)
			if tc.task == 1 && tc.point == pausepoint.RequestWritten {
				if _, err := os.Stat(filepath.Join(dir, ".ralph", "ralph.db")); err == nil {
					t.Fatal("the database exists at request-written: the case does not test a kill before the store")
				}
			}
			before := dbRows(t, dir)

			// The resume is given no flags: it takes the run's script.
			out, code := ralphCmd(t, bin, dir, "resume")
			if code != 0 || !strings.Contains(out, "completed") {
				fb, _ := os.ReadFile(filepath.Join(dir, ".ralph", "feedback.md"))
				t.Fatalf("resume: exit %d\n%s\nfeedback.md:\n%s", code, out, fb)
			}
			if tc.point == pausepoint.PostSnapshot && !strings.Contains(out, fmt.Sprintf("the gates passed in iteration %d", 4-tc.task)) {
				t.Errorf("the gates had passed, yet the resume did not just finish the task:\n%s", out)
			}
			after := dbRows(t, dir)
			for _, row := range before {
				if !slices.Contains(after, row) {
					t.Errorf("row %s written before the kill is gone after the resume", row)
				}
			}
			checkFinished(t, dir, tasks)
			if t.Failed() {
				t.Logf("resume output:\n%s", out)
			}
		})
	}
}

// A run killed before its task reached the store, then a new `ralph run`
// with another message instead of a resume: the new task is task 1, and
// origin.md holds its message, not the dead run's. Killed after the task
// was recorded but before its start finished, the dead task keeps its
// number and the new one takes the next; origin.md is still the message of
// the task that ran.
func TestKilledEarlyThenNewRun(t *testing.T) {
	bin := buildRalph(t)
	for _, tc := range []struct {
		point string
		tasks int
	}{
		{pausepoint.RequestWritten, 1},
		{pausepoint.TaskRecorded, 2},
		{pausepoint.TaskPreSnapshot, 2},
	} {
		t.Run(tc.point, func(t *testing.T) {
			t.Parallel()
			dir := crashRepo(t)
			runUntilPaused(t, bin, dir, tc.point, "--script", "agent.json", "a message nobody will see again")
			out, code := ralphCmd(t, bin, dir, "run", "--script", "agent.json", crashTask1)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, out)
			}
			if got := readState(t, dir, "origin.md"); got != crashTask1+"\n" {
				t.Errorf("origin.md = %q, want %q", got, crashTask1+"\n")
			}
			st := openDB(t, dir)
			defer st.Close()
			all, err := st.Tasks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var numbers []int
			for _, task := range all {
				numbers = append(numbers, task.Number)
			}
			want := []int{1}
			if tc.tasks == 2 {
				want = []int{1, 2}
			}
			if !slices.Equal(numbers, want) {
				t.Errorf("task numbers on record = %v, want %v", numbers, want)
			}
			if tc.tasks == 2 && len(all) == 2 && (all[0].Status != store.TaskInterrupted || all[1].Reason != "completed") {
				t.Errorf("the dead task ended %s, the new one %s; want interrupted and completed", all[0].Status, all[1].Reason)
			}
			if got := strings.TrimSpace(readState(t, dir, "task-counter.txt")); got != fmt.Sprint(tc.tasks) {
				t.Errorf("task-counter.txt = %s, want %d", got, tc.tasks)
			}
		})
	}
}

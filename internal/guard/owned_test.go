package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUndo(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{"phase.txt": "plan", "task.md": "# Task\nreal\n", "iteration.txt": "3", "task-counter.txt": "2", "task-history.md": "- Task 1: x\n"} {
		write(t, root, ".ralph/"+name, content)
	}
	s, err := TakeSeal(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s["origin.md"]; ok {
		t.Fatal("a missing file is sealed as present")
	}
	if got, _ := Undo(root, s); len(got) != 0 {
		t.Fatalf("nothing changed, undone %v", got)
	}

	write(t, root, ".ralph/phase.txt", "build")
	write(t, root, ".ralph/task.md", "# Task\neasy\n")
	write(t, root, ".ralph/origin.md", "invented")
	write(t, root, ".ralph/summary.md", "the agent's own")
	write(t, root, ".ralph/plan.tsx", "<App/>")
	if err := os.Remove(filepath.Join(root, ".ralph/task-history.md")); err != nil {
		t.Fatal(err)
	}
	got, err := Undo(root, s)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, w := range got {
		msgs = append(msgs, w.Message())
	}
	want := []string{
		"the agent wrote .ralph/phase.txt; the harness decides the phase (undone)",
		"the agent wrote .ralph/task.md; the task is the one ralph was given (undone)",
		"the agent wrote .ralph/origin.md; the first task's message never changes (undone)",
		"the agent deleted .ralph/task-history.md; the task history is the harness's record (undone)",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("undone:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	for name, content := range map[string]string{"phase.txt": "plan", "task.md": "# Task\nreal\n", "task-history.md": "- Task 1: x\n", "summary.md": "the agent's own", "plan.tsx": "<App/>"} {
		if got := read(t, root, ".ralph/"+name); got != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".ralph/origin.md")); !os.IsNotExist(err) {
		t.Errorf("origin.md the agent made is still there: %v", err)
	}
	if note := AgentNote(got); !strings.Contains(note, ".ralph/origin.md, .ralph/phase.txt, .ralph/task-history.md and .ralph/task.md") || !strings.Contains(note, "you write plan.tsx, summary.md and status.txt") {
		t.Errorf("note = %q", note)
	}
}

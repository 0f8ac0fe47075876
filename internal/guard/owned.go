package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// Owned lists the .ralph/ files only the harness writes (SPEC §2). The
// agent reads them; a write of its own is undone.
var Owned = []string{
	workspace.Phase, workspace.Task, workspace.Origin,
	workspace.Iteration, workspace.TaskCounter, workspace.TaskHistory,
}

// Seal is what the harness-owned files held when the agent started: a
// name maps to its content, and a name that is absent had no file.
type Seal map[string]string

// TakeSeal reads the owned files of the workspace at root.
func TakeSeal(root string) (Seal, error) {
	s := Seal{}
	for _, name := range Owned {
		b, err := os.ReadFile(filepath.Join(root, workspace.Dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("seal %s: %w", name, err)
		default:
			s[name] = string(b)
		}
	}
	return s, nil
}

// Write is an agent's change to one owned file.
type Write struct {
	// Name is the file's name in .ralph/.
	Name string `json:"file"`
	// Deleted is set when the agent removed the file.
	Deleted bool `json:"deleted,omitempty"`
}

// Message is the warning a person sees, in the harness's own words.
func (w Write) Message() string {
	verb := "wrote"
	if w.Deleted {
		verb = "deleted"
	}
	return fmt.Sprintf("the agent %s .ralph/%s; %s (undone)", verb, w.Name, ownerNote[w.Name])
}

// ownerNote says why each owned file is the harness's.
var ownerNote = map[string]string{
	workspace.Phase:       "the harness decides the phase",
	workspace.Task:        "the task is the one ralph was given",
	workspace.Origin:      "the first task's message never changes",
	workspace.Iteration:   "the harness counts the iterations",
	workspace.TaskCounter: "the harness numbers the tasks",
	workspace.TaskHistory: "the task history is the harness's record",
}

// Undo compares the owned files at root with s, puts back each one the
// agent changed, and returns what it undid, in Owned's order.
func Undo(root string, s Seal) ([]Write, error) {
	cur, err := TakeSeal(root)
	if err != nil {
		return nil, err
	}
	var undone []Write
	for _, name := range Owned {
		want, had := s[name]
		got, has := cur[name]
		if had == has && want == got {
			continue
		}
		path := filepath.Join(root, workspace.Dir, name)
		if had {
			err = workspace.WriteFile(path, []byte(want))
		} else {
			err = os.RemoveAll(path)
		}
		if err != nil {
			return undone, fmt.Errorf("undo the agent's change to %s: %w", name, err)
		}
		undone = append(undone, Write{Name: name, Deleted: had && !has})
	}
	return undone, nil
}

// AgentNote is the line feedback.md gets after an agent changed a file
// that is not its own: which files were undone and what it may write.
func AgentNote(undone []Write) string {
	names := make([]string, len(undone))
	for i, w := range undone {
		names[i] = ".ralph/" + w.Name
	}
	slices.Sort(names)
	names = slices.Compact(names)
	return fmt.Sprintf("The harness undid your change to %s. The harness alone writes phase.txt, task.md, origin.md, iteration.txt, task-counter.txt and task-history.md; you write plan.tsx, summary.md and status.txt, and the project's own files.", joinList(names))
}

// joinList joins names as "a", "a and b" or "a, b and c".
func joinList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := ""
	for i, n := range names[:len(names)-1] {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out + " and " + names[len(names)-1]
}

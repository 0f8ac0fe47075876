package mutation

import (
	"os"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// FuzzMutation feeds arbitrary plans and task files through Context,
// Validate and Affected: whatever parses must not panic.
func FuzzMutation(f *testing.F) {
	for _, name := range []string{"vibrant-before.tsx", "vibrant-task3.tsx", "vibrant-add-only.tsx"} {
		p, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		md, err := os.ReadFile("testdata/task3.md")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(p), string(md), string(p))
	}
	f.Add(`<App><Screen name="a"><Section /></Screen></App>`, "# Task: x\n## Requirements\n- [REMOVE] the Section\n", `<App />`)
	f.Fuzz(func(t *testing.T, cur, md, prev string) {
		root, err := plan.Parse([]byte(cur))
		if err != nil {
			return
		}
		tk, err := task.Parse([]byte(md))
		if err != nil {
			return
		}
		before, _ := plan.Parse([]byte(prev))
		_ = Context(root, tk)
		_ = Affected(root, tk)
		res := Validate(root, before, tk, tk.Counter)
		for _, fd := range append(res.Failures, res.Warnings...) {
			if fd.ID == "" || fd.Message == "" {
				t.Fatalf("finding without id or message: %+v", fd)
			}
		}
	})
}

package scope

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/task"
)

// FuzzCountItems checks that counting never panics and terminates on any
// input, with the input also served as every imported file so import
// resolution (and import cycles) are exercised. Seeds live in
// testdata/fuzz/FuzzCountItems; the section files under testdata/count are
// added too.
func FuzzCountItems(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "count", "*", "*.tsx"))
	for _, name := range files {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		self := func(string) ([]byte, bool) { return src, true }
		c := CountItems(src, self)
		if c.N < 0 {
			t.Fatalf("negative count %d", c.N)
		}
		if c.Items != nil && len(c.Items) != c.N {
			t.Fatalf("len(Items) = %d, N = %d", len(c.Items), c.N)
		}
		CountItems(src, nil)
		markers := []plan.Marker{{Kind: plan.Add, Count: 2}, {Kind: plan.Preserved}, {Kind: plan.NoChanges}, {Kind: plan.Remove}, {Kind: plan.Modify}, {Kind: plan.Fix, Text: string(src)}}
		reqs := []Requirement{{N: 1, Kind: task.Fix, Text: string(src), Check: []string{"x"}, Ran: &CheckRun{Output: string(src)}}, {N: 2, Kind: task.Modify, Text: string(src)}}
		for _, now := range [][]byte{src, append([]byte("const x = ["), src...)} {
			Check(Input{Requirements: reqs, Preserve: []string{string(src)}, Targets: []Target{{
				Section: Section{Name: "s", File: "s.tsx", Markers: markers},
				Before:  Version{Present: true, Src: src, Siblings: self},
				Now:     Version{Present: true, Src: now},
			}}})
		}
	})
}

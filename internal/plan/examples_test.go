package plan

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesValid checks that the example plans in testdata parse and
// validate without failures or warnings.
func TestExamplesValid(t *testing.T) {
	for _, name := range []string{"app.tsx", "orchestration.tsx", "mutation.tsx"} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			root, res := Check(name, src, DefaultRegistries())
			if root == nil || !res.OK() || len(res.Warnings) > 0 {
				t.Fatalf("%s: want valid, got failures %v warnings %v", name, res.Failures, res.Warnings)
			}
		})
	}
}

// TestExamplesCoverComponents checks that the examples use every declared
// component and the mutation example every marker kind.
func TestExamplesCoverComponents(t *testing.T) {
	seen := map[string]bool{}
	kinds := map[MarkerKind]bool{}
	for _, name := range []string{"app.tsx", "orchestration.tsx", "mutation.tsx"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		root, err := ParseFile(name, src)
		if err != nil {
			t.Fatal(err)
		}
		root.Walk(func(n *Node) bool {
			seen[n.Component] = true
			if name == "mutation.tsx" {
				for _, m := range n.Markers {
					kinds[m.Kind] = true
				}
			}
			return true
		})
	}
	for _, c := range DefaultRegistries().Components {
		if !seen[c.Name] {
			t.Errorf("no example uses <%s>", c.Name)
		}
	}
	for k := Add; k <= Preserved; k++ {
		if !kinds[k] {
			t.Errorf("mutation.tsx has no %s marker", k)
		}
	}
}

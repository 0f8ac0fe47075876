// The package layers of README.md's Architecture section, held against
// the code: a package imports packages of its own layer or the layers
// below, never one above.
package internal_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/ralph-harness/ralph/"

// layers lists each package's layer, highest first. A package under
// internal/agent/ other than the registry is an agent backend.
var layers = map[string]int{
	"cmd/ralph": 0, "internal/cli": 1,
	"internal/session": 2, "internal/progress": 2, "internal/status": 2, "internal/approval": 2, "internal/notify": 2,
	"internal/planreport": 2, "internal/doctor": 2, "internal/serve": 2, "internal/temporalclient": 2,
	"internal/agent/registry": 2,
	"internal/engine":         3, "internal/spec": 3, "internal/temporalrun": 3,
	"internal/agentcall": 4, "internal/gate": 4, "internal/scope": 4, "internal/guard": 4, "internal/stall": 4,
	"internal/mergequeue": 4, "internal/plancontext": 4, "internal/mutation": 4, "internal/detect": 4,
	"internal/agent":    4,
	"internal/snapshot": 5, "internal/worktree": 5, "internal/workspace": 5, "internal/store": 5,
	"internal/plan": 5, "internal/task": 5, "internal/theme": 5, "internal/recipe": 5, "internal/config": 5,
	"internal/demo": 5, "internal/pausepoint": 5, "internal/render": 5,
	"internal/git": 6, "internal/gitindex": 6, "internal/filestamp": 6, "internal/proc": 6, "internal/proc/supervisor": 6, "internal/filelock": 6, "internal/sandbox": 6, "internal/failure": 6, "internal/secrets": 6, "internal/plaintext": 6,
}

func layerOf(pkg string) (int, bool) {
	if l, ok := layers[pkg]; ok {
		return l, true
	}
	if strings.HasPrefix(pkg, "internal/agent/") {
		return layers["internal/agent"], true
	}
	return 0, false
}

func TestPackageLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"cmd/...", module+"internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		if pkg == "internal" || strings.HasPrefix(pkg, "internal/testutil") || strings.HasPrefix(pkg, "internal/agent/cliagent/clitest") {
			continue // test support
		}
		from, ok := layerOf(pkg)
		if !ok {
			t.Errorf("%s has no layer: add it to README.md's Architecture table and here", pkg)
			continue
		}
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			to, known := layerOf(dep)
			if known && to < from {
				t.Errorf("%s (layer %d) imports %s (layer %d, above it)", pkg, from, dep, to)
			}
		}
	}
}

// cliLineCap bounds internal/cli's non-test Go: the command package parses
// flags, builds the pieces and calls them; logic that grows belongs in a
// package of its own (README, Architecture).
const cliLineCap = 3000

func TestCLIStaysWiring(t *testing.T) {
	files, err := filepath.Glob("cli/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines > cliLineCap {
		t.Errorf("internal/cli has %d non-test lines, over its cap of %d: move logic into a package", lines, cliLineCap)
	}
}

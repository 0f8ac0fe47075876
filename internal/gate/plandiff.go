package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/plan"
)

// PlanDiff is the plan-diff gate (SPEC §5, §9): information only. It
// compares the plan's sections with the source files under src/sections/
// (plan.Diff) and warns about sections without a file and files no
// section names. It never fails, and skips when there is no App plan.
type PlanDiff struct {
	// Plan returns the current plan; nil reads .ralph/plan.tsx under the
	// workspace root. A nil plan and no error means there is no plan.
	Plan func() (*plan.Node, error)
}

// planDiffListMax bounds how many entries of each kind the message lists.
const planDiffListMax = 20

// Name returns "plan-diff".
func (*PlanDiff) Name() string { return "plan-diff" }

// MayWriteTree reports false: the gate only reads, in ralph's process.
func (*PlanDiff) MayWriteTree(Env) bool { return false }

// Check compares the plan with the implementation.
func (d *PlanDiff) Check(ctx context.Context, env Env) Result {
	root, err := currentPlan(env.Root, d.Plan)
	if err != nil {
		return Result{Status: Warn,
			Message: fmt.Sprintf("the plan cannot be read, so it was not compared with the code: %v", err),
			Fix:     "Repair .ralph/plan.tsx so that it parses; `ralph plan validate` shows where it breaks."}
	}
	if root == nil {
		return Result{Status: Skip, Message: "no plan to compare"}
	}
	if root.Component != "App" {
		return Result{Status: Skip, Message: fmt.Sprintf("a <%s> plan has no sections to compare", root.Component)}
	}
	diff, err := plan.Diff(root, env.Root)
	if err != nil {
		return Result{Status: Warn, Message: fmt.Sprintf("the plan was not compared with the code: %v", err)}
	}
	if diff.Empty() {
		return Result{Status: Pass, Message: fmt.Sprintf("every planned section has its file (%d sections)", len(plan.Sections(root)))}
	}
	var b strings.Builder
	var fixes []string
	if len(diff.Missing) > 0 {
		fmt.Fprintf(&b, "%s in the plan without a source file:\n", countNoun(len(diff.Missing), "section"))
		for i, m := range diff.Missing {
			if i == planDiffListMax {
				fmt.Fprintf(&b, "- … and %d more\n", len(diff.Missing)-i)
				break
			}
			fmt.Fprintf(&b, "- %s (plan.tsx:%d) → %s\n", sectionLabel(m.Section), m.Section.Line, m.File)
		}
		fixes = append(fixes, "build each missing section in the file named (or give its <Section> a file prop naming where it lives)")
	}
	if len(diff.Unplanned) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s under %s/ that no section of the plan names:\n", countNoun(len(diff.Unplanned), "file"), plan.SectionsDir)
		for i, f := range diff.Unplanned {
			if i == planDiffListMax {
				fmt.Fprintf(&b, "- … and %d more\n", len(diff.Unplanned)-i)
				break
			}
			fmt.Fprintf(&b, "- %s\n", f)
		}
		fixes = append(fixes, "add a <Section> for each file the app uses, and delete the files it does not")
	}
	fix := strings.Join(fixes, "; ")
	return Result{Status: Warn, Message: strings.TrimSpace(b.String()),
		Fix: strings.ToUpper(fix[:1]) + fix[1:] + ". This is information: it does not block completion."}
}

// currentPlan returns the plan from load, or parsed from .ralph/plan.tsx
// under root when load is nil; nil and no error when there is none.
func currentPlan(root string, load func() (*plan.Node, error)) (*plan.Node, error) {
	if load != nil {
		return load()
	}
	src, err := os.ReadFile(filepath.Join(root, ".ralph", "plan.tsx"))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(bytes.TrimSpace(src)) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return plan.Parse(src)
}

func sectionLabel(s *plan.Node) string {
	g := s.Str("gumdrop")
	if g == "" {
		g = "section"
	}
	if v := s.Str("variant"); v != "" {
		g += " (" + v + ")"
	}
	return g
}

func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Package gate holds the quality gates the harness runs when an agent asks
// to finish. A gate returns pass, fail or warn with a message and an
// explicit fix the agent can follow; failures block completion, warnings
// go to feedback and do not.
package gate

import (
	"context"
	"fmt"
	"strings"
)

// Status is a gate's verdict.
type Status string

// Verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Warn Status = "warn"
)

// Result is one gate's verdict.
type Result struct {
	Gate    string `json:"gate"`
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
	// Fix tells the agent exactly what to do about a failure or warning.
	Fix string `json:"fix,omitempty"`
}

// Env is what gates may look at.
type Env struct {
	// Root is the workspace root.
	Root string
	// Task is the current task number (for snapshots such as task-N-pre).
	Task int
}

// Gate checks one property of the workspace.
type Gate interface {
	Name() string
	Check(ctx context.Context, env Env) Result
}

// RunAll runs gates in order and returns every verdict. A context ending
// stops the run early; the remaining gates are not reported.
func RunAll(ctx context.Context, gates []Gate, env Env) []Result {
	out := make([]Result, 0, len(gates))
	for _, g := range gates {
		if ctx.Err() != nil {
			break
		}
		r := g.Check(ctx, env)
		if r.Gate == "" {
			r.Gate = g.Name()
		}
		out = append(out, r)
	}
	return out
}

// Failed returns the failing results.
func Failed(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.Status == Fail {
			out = append(out, r)
		}
	}
	return out
}

// Warnings returns the warning results.
func Warnings(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.Status == Warn {
			out = append(out, r)
		}
	}
	return out
}

// Feedback formats failures and warnings for feedback.md: every failure
// with its explicit fix, then the warnings.
func Feedback(results []Result) string {
	var b strings.Builder
	failed, warned := Failed(results), Warnings(results)
	if len(failed) == 0 {
		b.WriteString("# Quality Gates Passed\n\nEvery gate passed. The warnings below did not block completion.\n")
	} else {
		b.WriteString("# Quality Gates Failed\n\nYou asked to finish, but the harness's quality gates did not pass. Fix each failure below, then mark the task complete again.\n")
	}
	for _, r := range failed {
		fmt.Fprintf(&b, "\n## FAIL [%s]\n\n%s\n", r.Gate, strings.TrimSpace(r.Message))
		if r.Fix != "" {
			fmt.Fprintf(&b, "\n**Fix:** %s\n", strings.TrimSpace(r.Fix))
		}
	}
	for _, r := range warned {
		fmt.Fprintf(&b, "\n## WARN [%s]\n\n%s\n", r.Gate, strings.TrimSpace(r.Message))
		if r.Fix != "" {
			fmt.Fprintf(&b, "\n**Suggestion:** %s\n", strings.TrimSpace(r.Fix))
		}
	}
	return b.String()
}

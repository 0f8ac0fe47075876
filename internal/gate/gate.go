// Package gate holds the quality gates the harness runs when an agent asks
// to finish. A gate returns pass, fail or warn with a message and an
// explicit fix the agent can follow; failures block completion, warnings
// go to feedback and do not. A gate with nothing to check in this project
// or plan (a web-app gate where there is no app) returns skip with a
// one-line reason: it neither blocks nor vouches for the work.
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
	// Skip means the gate does not apply: it had nothing to check.
	Skip Status = "skip"
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
	// Iteration is the iteration the gates run at; 0 outside a run.
	Iteration int
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

// Skipped returns the results of gates that did not apply.
func Skipped(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.Status == Skip {
			out = append(out, r)
		}
	}
	return out
}

// Summary is one line naming each gate with its verdict, and the reason
// of each that was skipped: "has-summary pass, plan-diff skip (no plan)".
func Summary(results []Result) string {
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = r.Gate + " " + string(r.Status)
		if r.Status == Skip && r.Message != "" {
			parts[i] += " (" + r.Message + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// Tally counts the verdicts: "2 passed, 4 skipped".
func Tally(results []Result) string {
	counts := map[Status]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	var parts []string
	for _, s := range []struct {
		status Status
		word   string
	}{{Pass, "passed"}, {Warn, "warned"}, {Fail, "failed"}, {Skip, "skipped"}} {
		if n := counts[s.status]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s.word))
		}
	}
	return strings.Join(parts, ", ")
}

// WorkChecker is implemented by gates that can tell whether they check
// the project's own work — its build, tests or linters — rather than
// only the harness's protocol.
type WorkChecker interface {
	ChecksWork() bool
}

// ChecksWork returns the names of the gates that check the project's own
// work and can block a completion; none means completion rests on the
// agent's word.
func ChecksWork(gates []Gate) []string {
	var out []string
	for _, g := range gates {
		if w, ok := g.(WorkChecker); ok && w.ChecksWork() {
			out = append(out, g.Name())
		}
	}
	return out
}

// Feedback formats failures and warnings for feedback.md: every failure
// with its explicit fix, then the warnings, then the gates that were
// skipped and why.
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
	if skipped := Skipped(results); len(skipped) > 0 {
		b.WriteString("\n## Skipped (nothing to check)\n\n")
		for _, r := range skipped {
			fmt.Fprintf(&b, "- SKIP [%s] %s\n", r.Gate, strings.TrimSpace(r.Message))
		}
	}
	return b.String()
}

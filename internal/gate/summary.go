package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// HasSummary passes when .ralph/summary.md says what was done.
type HasSummary struct{}

// Name returns "has-summary".
func (HasSummary) Name() string { return "has-summary" }

// MayWriteTree reports false: the gate only reads, in ralph's process.
func (HasSummary) MayWriteTree(Env) bool { return false }

// Check reads .ralph/summary.md.
func (HasSummary) Check(ctx context.Context, env Env) Result {
	data, err := os.ReadFile(filepath.Join(env.Root, ".ralph", "summary.md"))
	if err != nil || strings.TrimSpace(string(data)) == "" {
		return Result{Status: Fail, Message: ".ralph/summary.md is missing or empty.",
			Fix: "Write .ralph/summary.md: its first line is a one-line summary of what you did, then the details."}
	}
	return Result{Status: Pass, Message: "summary.md present"}
}

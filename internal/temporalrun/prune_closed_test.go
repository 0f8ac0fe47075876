package temporalrun

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// statuses answers DescribeWorkflowExecution from a table: a missing id
// is unknown to the cluster; "unreachable" fails as a dead cluster would.
type statuses map[string]enumspb.WorkflowExecutionStatus

func (s statuses) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if id == "unreachable" {
		return nil, errors.New("connection refused")
	}
	st, ok := s[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: st}}, nil
}

// PruneClosed removes, whatever their age, the worktrees of workflows that
// ended, were cancelled or that the cluster no longer knows, and keeps
// those of running workflows, of workflows it cannot ask about, and
// folders with no marker.
func TestPruneClosed(t *testing.T) {
	cache := t.TempDir()
	r := &Runner{Cache: cache, Log: slog.New(slog.DiscardHandler)}
	for _, wt := range []struct{ id, name string }{
		{"ralph-task-running", "attempt-1"},
		{"ralph-task-cancelled", "attempt-1"},
		{"ralph-spec-abc/login", "step-3-attempt-1"},
		{"ralph-spec-abc/login", "step-3-attempt-2"},
		{"ralph-task-forgotten", "attempt-2"},
		{"unreachable", "attempt-1"},
	} {
		if err := os.MkdirAll(r.worktreeDir(wt.id, wt.name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unmarked := filepath.Join(cache, "worktrees", "old-layout", "attempt-1")
	if err := os.MkdirAll(unmarked, 0o755); err != nil {
		t.Fatal(err)
	}
	c := statuses{
		"ralph-task-running":   enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		"ralph-task-cancelled": enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED,
		"ralph-spec-abc/login": enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED,
	}
	n, err := r.PruneClosed(context.Background(), c)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d, %v; want 4", n, err)
	}
	for id, kept := range map[string]bool{
		"ralph-task-running": true, "ralph-task-cancelled": false, "ralph-spec-abc/login": false,
		"ralph-task-forgotten": false, "unreachable": true, "old-layout": true,
	} {
		_, err := os.Stat(filepath.Join(cache, "worktrees", slug(id)))
		if got := err == nil; got != kept {
			t.Errorf("%s: kept = %v, want %v", id, got, kept)
		}
	}
	// A step's own clean-up leaves no marker-only folder behind.
	dir := filepath.Dir(r.worktreeDir("ralph-task-running", "attempt-1"))
	if err := os.RemoveAll(filepath.Join(dir, "attempt-1")); err != nil {
		t.Fatal(err)
	}
	dropWorkflowDir(dir)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the workflow folder with only its marker stays: %v", err)
	}
}

package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/ralph-harness/ralph/internal/worktree"
)

// workflowMarker names, inside worktrees/<workflow>/, the file that holds
// the workflow's id (the folder's name is the id made path-safe).
const workflowMarker = ".workflow"

// worktreeDir is the path of worktree name of workflow wfID in the cache,
// its workflow folder made and marked with the id so that PruneClosed can
// ask whether the workflow still runs.
func (r *Runner) worktreeDir(wfID, name string) string {
	dir := filepath.Join(r.Cache, "worktrees", slug(wfID))
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, workflowMarker), []byte(wfID+"\n"), 0o644)
	}
	return filepath.Join(dir, name)
}

// describer is what PruneClosed needs of the Temporal client.
type describer interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// PruneClosed removes the worktrees of workflows that no longer run (they
// ended, were cancelled or terminated, or the cluster no longer knows
// them): what a cancelled task or a worker killed mid-step left. A
// workflow the cluster cannot be asked about keeps its worktrees. It
// returns how many worktrees went.
func (r *Runner) PruneClosed(ctx context.Context, c describer) (removed int, err error) {
	root := filepath.Join(r.Cache, "worktrees")
	wfs, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", root, err)
	}
	for _, wf := range wfs {
		dir := filepath.Join(root, wf.Name())
		raw, err := os.ReadFile(filepath.Join(dir, workflowMarker))
		if err != nil {
			continue // unmarked: left to PruneRuns's age rule
		}
		id := strings.TrimSpace(string(raw))
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		var missing *serviceerror.NotFound
		switch {
		case errors.As(err, &missing):
		case err != nil:
			continue
		case d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != workflowMarker {
				removed++
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("prune %s: %w", dir, err)
		}
	}
	if removed > 0 {
		repos, _ := filepath.Glob(filepath.Join(r.Cache, "repos", "*"))
		for _, repo := range repos {
			_ = worktree.Prune(ctx, repo)
		}
	}
	return removed, nil
}

// dropWorkflowDir removes worktrees/<workflow> once no worktree is left
// in it (its marker alone does not keep it).
func dropWorkflowDir(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != workflowMarker {
			return
		}
	}
	_ = os.Remove(filepath.Join(dir, workflowMarker))
	_ = os.Remove(dir)
}

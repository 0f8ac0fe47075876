package mutation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/snapshot"
)

// PlanPath is where the plan lives in a snapshot, relative to the root.
const PlanPath = ".ralph/plan.tsx"

// Snapshots reads files as a snapshot holds them; *snapshot.Repo is one.
type Snapshots interface {
	ReadFile(ctx context.Context, name, path string) ([]byte, error)
}

// PreviousPlan returns the plan as it was when task n started: the plan in
// the task-n-pre snapshot. It returns nil and no error when there are no
// snapshots (s is nil, or a nil *snapshot.Repo), there is no such snapshot, the snapshot holds no plan, or that plan does not parse;
// other errors (git failing) are returned.
func PreviousPlan(ctx context.Context, s Snapshots, n int) (*plan.Node, error) {
	if r, ok := s.(*snapshot.Repo); s == nil || n <= 0 || (ok && r == nil) {
		return nil, nil
	}
	src, err := s.ReadFile(ctx, snapshot.TaskPre(n), PlanPath)
	switch {
	case errors.Is(err, snapshot.ErrNoSuchSnapshot), errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read plan at task start: %w", err)
	}
	root, err := plan.Parse(src)
	if err != nil {
		return nil, nil
	}
	return root, nil
}

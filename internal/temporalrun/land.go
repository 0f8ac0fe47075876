package temporalrun

import "context"

// Lander lands a finished branch that a worker pushed to the remote into
// the local checkout; commit is the branch's head as the worker pushed it.
// ralph specs run --temporal lands through the same merge queue as local
// parallel runs (internal/mergequeue).
type Lander interface {
	Land(ctx context.Context, branch, commit string) error
}

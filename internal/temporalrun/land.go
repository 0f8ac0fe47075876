package temporalrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Lander lands a finished branch into the local checkout. The merge
// queue of local parallel runs implements it too; RebaseLander is the
// simple one.
type Lander interface {
	Land(ctx context.Context, branch, commit string) error
}

// RebaseLander lands a branch by rebasing the commit onto the checkout's
// HEAD in a scratch worktree and fast-forwarding the checkout to it, one
// branch at a time.
type RebaseLander struct {
	// Dir is the checkout; Remote the name or URL the branch is on.
	Dir, Remote string
	mu          sync.Mutex
}

// Land fetches branch from the remote, replays commit's new commits onto
// HEAD and fast-forwards. A commit already in HEAD lands as nothing.
func (l *RebaseLander) Land(ctx context.Context, branch, commit string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := git(ctx, l.Dir, "fetch", "--no-tags", l.Remote, "+refs/heads/"+branch+":refs/ralph/landing/"+branch); err != nil {
		return err
	}
	if commit == "" {
		commit = "refs/ralph/landing/" + branch
	}
	head, err := git(ctx, l.Dir, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if _, err := git(ctx, l.Dir, "merge-base", "--is-ancestor", commit, head); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp("", "ralph-land-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "wt")
	if _, err := git(ctx, l.Dir, "worktree", "add", "--detach", wt, commit); err != nil {
		return err
	}
	defer git(context.WithoutCancel(ctx), l.Dir, "worktree", "remove", "--force", wt) //nolint:errcheck
	if _, err := git(ctx, wt, "rebase", head); err != nil {
		_, _ = git(ctx, wt, "rebase", "--abort")
		return fmt.Errorf("land %s: %w", branch, err)
	}
	landed, err := git(ctx, wt, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if _, err := git(ctx, l.Dir, "merge", "--ff-only", "-q", landed); err != nil {
		return fmt.Errorf("land %s: %w", branch, err)
	}
	return nil
}

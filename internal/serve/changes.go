package serve

import (
	"context"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/snapshot"
)

// taskChange is the size of a task's change to the tree: from its
// task-N-pre snapshot to its task-N-post one, or to the working tree
// while it has none.
type taskChange struct {
	snapshot.DiffStat
	// From and To are the snapshots the change is measured between, for
	// the link to its diff view; To is "" for the working tree.
	From, To string
	// Live is true when the change is measured to the working tree.
	Live bool
}

// changeCache keeps the changes measured: between two snapshots for
// good, to the working tree for liveChangeTTL, as the live pages ask on
// every store change.
type changeCache struct {
	mu   sync.Mutex
	done map[int]taskChange
	live map[int]liveChange
	// trees are iterations' changes, by "from..to" tree ids.
	trees map[string]snapshot.DiffStat
}

type liveChange struct {
	c  taskChange
	at time.Time
}

const liveChangeTTL = 2 * time.Second

// taskChange measures task n's change; ok is false when there is no
// task-N-pre snapshot (a task started on an empty tree takes none).
func (s *Server) taskChange(ctx context.Context, n int) (taskChange, bool) {
	s.changes.mu.Lock()
	if c, ok := s.changes.done[n]; ok {
		s.changes.mu.Unlock()
		return c, true
	}
	if l, ok := s.changes.live[n]; ok && time.Since(l.at) < liveChangeTTL {
		s.changes.mu.Unlock()
		return l.c, true
	}
	s.changes.mu.Unlock()
	repo, err := s.openSnapshots(ctx)
	if err != nil {
		return taskChange{}, false
	}
	pre, post := snapshot.TaskPre(n), snapshot.TaskPost(n)
	if ok, err := repo.Exists(ctx, pre); err != nil || !ok {
		return taskChange{}, false
	}
	c := taskChange{From: pre}
	to := post
	if ok, err := repo.Exists(ctx, post); err != nil || !ok {
		to, c.Live = "", true
	}
	c.To = to
	if c.DiffStat, err = repo.Stat(ctx, pre, to); err != nil {
		s.log.Warn("diff stat", "task", n, "err", err)
		return taskChange{}, false
	}
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	if c.Live {
		s.changes.live[n] = liveChange{c: c, at: time.Now()}
	} else {
		s.changes.done[n] = c
	}
	return c, true
}

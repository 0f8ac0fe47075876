package snapshot

import (
	"context"
	"fmt"
	"sync"

	"github.com/ralph-harness/ralph/internal/git"
)

// buildTree computes the trees on the changed paths itself and writes
// them as loose objects (git's mktree, in a repository where git gives
// object files modes of its own). Writing an object makes a file, which
// costs more than the rest of recording an iteration that changed a file
// (a file system may search a while for a free inode), so the trees are
// written in the background, straight after buildTree returns, while the
// next agent starts. Nothing of this Repo's reads them first: every git
// the Repo runs (Repo.git, batchLines) waits until the trees computed
// before it are written (wait), and buildTree takes the trees it computed
// from its cache. Should a write fail, or git write a tree under another
// id than buildTree computed (never seen), the iteration that recorded
// it gets no commit on the chain unless git has the tree by the time the
// chain is written (a later whole read wrote it), the next one reads the
// whole tree, and buildTree waits for the write from then on (writeNow).
// The store records the tree's id before git has it: a reader in another
// process (the dashboard) that asks for it in that moment, or after a
// kill in it, finds no such tree and shows the iteration without its
// change, as one that recorded none.

// treeBatch is the trees one buildTree computed, each below the ones
// above it: mktree's input and the ids it must answer, in order; or,
// when loose is an object directory, their contents, written there as
// loose objects instead.
type treeBatch struct {
	req    []byte
	ids    []string
	loose  string
	bodies [][]byte
}

// pendingTrees writes buildTree's trees in the background.
type pendingTrees struct {
	// mu is held while trees are written; it guards mktree.
	mu      sync.Mutex
	mktree  *git.Batch
	objects looseWriter
	// beforeWrite, when set (by tests), is called before each batch is
	// written.
	beforeWrite func()

	// qmu guards the rest.
	qmu   sync.Mutex
	queue []treeBatch
	// err is the first failure not yet taken; failed holds the trees
	// of every batch that failed.
	err    error
	failed map[string]bool
}

// add queues b and starts writing it.
func (p *pendingTrees) add(r *Repo, b treeBatch) {
	p.qmu.Lock()
	p.queue = append(p.queue, b)
	p.qmu.Unlock()
	go p.flush(r)
}

// flush writes every queued batch, after a write under way.
func (p *pendingTrees) flush(r *Repo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		p.qmu.Lock()
		queue := p.queue
		p.queue = nil
		p.qmu.Unlock()
		if len(queue) == 0 {
			return
		}
		for _, b := range queue {
			err := p.write(r, b)
			p.qmu.Lock()
			if err != nil {
				if p.err == nil {
					p.err = err
				}
				if p.failed == nil {
					p.failed = map[string]bool{}
				}
				for _, id := range b.ids {
					p.failed[id] = true
				}
			}
			p.qmu.Unlock()
		}
	}
}

// writeNow writes b at once, after what is queued.
func (p *pendingTrees) writeNow(r *Repo, b treeBatch) error {
	p.flush(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.write(r, b)
}

// write writes the trees of b, or has git write them (p.mu held).
func (p *pendingTrees) write(r *Repo, b treeBatch) error {
	if p.beforeWrite != nil {
		p.beforeWrite()
	}
	if b.loose != "" {
		p.objects.dir = b.loose
		for i, body := range b.bodies {
			id, err := p.objects.write("tree", body)
			if err != nil {
				return fmt.Errorf("write trees: %w", err)
			}
			if id != b.ids[i] {
				return fmt.Errorf("write trees: wrote %s, computed %s", id, b.ids[i])
			}
		}
		return nil
	}
	got, err := r.askBatch(context.Background(), &p.mktree, b.req, len(b.ids), "mktree", "-z", "--batch")
	if err != nil {
		return fmt.Errorf("write trees: %w", err)
	}
	for i, want := range b.ids {
		if got[i] != want {
			return fmt.Errorf("write trees: git mktree wrote %s, computed %s", got[i], want)
		}
	}
	return nil
}

// wait returns once every batch queued before it is written.
func (p *pendingTrees) wait(r *Repo) { p.flush(r) }

// takeErr returns the first failure since the last call, and forgets it.
func (p *pendingTrees) takeErr() error {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	err := p.err
	p.err = nil
	return err
}

// broken reports whether a batch ever failed: buildTree then waits for
// the write, as before any was written in the background.
func (p *pendingTrees) broken() bool {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return p.failed != nil
}

// lost reports whether a write of tree failed.
func (p *pendingTrees) lost(tree string) bool {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return p.failed[tree]
}

// found forgets that a write of tree failed: git has it now.
func (p *pendingTrees) found(tree string) {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	delete(p.failed, tree)
}

// close waits for what is queued and ends the long-running mktree.
func (p *pendingTrees) close(r *Repo) {
	p.flush(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mktree != nil {
		p.mktree.Close()
		p.mktree = nil
	}
}

package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/store"
)

// maxTail bounds the output a Result carries.
const maxTail = 2 << 10

// Runner is the worker's side of a job: it owns a cache of clones and
// runs each attempt in a fresh worktree.
type Runner struct {
	// Client signals and queries the workflows it runs for.
	Client client.Client
	// Cache holds repos/<hash> clones and their worktrees.
	Cache string
	// Ralph is the ralph binary the attempt runs (default: this one).
	Ralph string
	// Identity names this worker in results and heartbeats.
	Identity string
	// Beat is the heartbeat and bridge period (default 1s).
	Beat time.Duration
	// Keep is how long a spec step's transcript stays under runs/
	// (0: for ever); Serve prunes older ones at start and hourly.
	Keep time.Duration
	Log  *slog.Logger

	mu    sync.Mutex
	repos map[string]*sync.Mutex
}

// repoLock serialises clone and fetch of one remote in the cache.
func (r *Runner) repoLock(dir string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.repos == nil {
		r.repos = map[string]*sync.Mutex{}
	}
	if r.repos[dir] == nil {
		r.repos[dir] = &sync.Mutex{}
	}
	return r.repos[dir]
}

// slug makes s safe as one path element.
func slug(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// prepare clones or fetches job.Remote into the cache and adds a
// worktree for this attempt on job.Branch at job.Base.
func (r *Runner) prepare(ctx context.Context, job Job, wfID string, attempt int32) (string, error) {
	wt := r.worktreeDir(wfID, fmt.Sprintf("attempt-%d", attempt))
	if _, err := r.prepareStep(ctx, job, job.Base, wt); err != nil {
		return "", err
	}
	return wt, nil
}

// RunJob is the activity: one attempt of job on this worker.
func (r *Runner) RunJob(ctx context.Context, job Job) (Result, error) {
	info := activity.GetInfo(ctx)
	wfID, runID := info.WorkflowExecution.ID, info.WorkflowExecution.RunID
	log := r.Log.With("workflow", wfID, "attempt", info.Attempt)
	log.Info("attempt starts", "job", job.Name)
	activity.RecordHeartbeat(ctx, Progress{Worker: r.Identity, Attempt: info.Attempt, Phase: "preparing"})
	wt, err := r.prepare(ctx, job, wfID, info.Attempt)
	if err != nil {
		return Result{}, err
	}
	res := Result{Branch: job.Branch, Worker: r.Identity, Transcript: r.Identity + ":" + filepath.Join(wt, ".ralph", "ralph.db")}

	// The bridge: heartbeats with the child's progress; <Human> requests
	// out as a signal, answers and stop requests in from the query.
	out, said, err := r.runRalph(ctx, wt, job.Args, func(ctx context.Context) {
		r.bridge(ctx, wt, wfID, runID, info.Attempt)
	})
	if ctx.Err() != nil {
		log.Info("attempt cancelled", "err", ctx.Err())
		return Result{}, ctx.Err()
	}
	if err != nil {
		return Result{}, err
	}
	res.ExitCode, res.Tail = out.ExitCode, said
	if res.ExitCode == 0 {
		// What the run left uncommitted (a task's work, a spec's state
		// markers) goes with the branch; ralph's own .ralph/ files stay.
		if _, err := git.Run(ctx, wt, "add", "-A", "--", ".", ":(exclude).ralph"); err != nil {
			return Result{}, err
		}
		if _, err := git.Run(ctx, wt, "diff", "--cached", "--quiet"); err != nil {
			if _, err := git.Run(ctx, wt, "commit", "-q", "-m", "ralph: "+job.Kind+" "+job.Name); err != nil {
				return Result{}, err
			}
		}
		if res.Commit, err = git.Line(ctx, wt, "rev-parse", "HEAD"); err != nil {
			return Result{}, err
		}
		// A retry replaces what an earlier attempt may have pushed.
		if _, err := git.Run(ctx, wt, "push", "--force", "origin", "HEAD:refs/heads/"+job.Branch); err != nil {
			return Result{}, err
		}
	}
	log.Info("attempt ends", "exit", res.ExitCode, "commit", res.Commit)
	return res, nil
}

// bridge runs until ctx ends, once per beat.
func (r *Runner) bridge(ctx context.Context, wt, wfID, runID string, attempt int32) {
	beat := r.Beat
	if beat <= 0 {
		beat = time.Second
	}
	db := filepath.Join(wt, ".ralph", "ralph.db")
	var sent []Request
	stopped := false
	t := time.NewTicker(beat)
	defer t.Stop()
	for {
		p := Progress{Worker: r.Identity, Attempt: attempt, Phase: "running"}
		if _, err := os.Stat(db); err == nil {
			if st, err := store.Open(ctx, db); err == nil {
				r.sync(ctx, st, &p, wfID, runID, attempt, &sent, &stopped)
				_ = st.Close()
			}
		}
		activity.RecordHeartbeat(ctx, p)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Runner) sync(ctx context.Context, st *store.Store, p *Progress, wfID, runID string, attempt int32, sent *[]Request, stopped *bool) {
	db := st.DB()
	_ = db.QueryRowContext(ctx, `SELECT COALESCE(MAX(number),0) FROM iterations`).Scan(&p.Iteration)
	_ = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events`).Scan(&p.Events)
	var specCalls int
	var specState string
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(plan_attempt+impl_attempts),0), COALESCE(MAX(state),'') FROM specs`).Scan(&specCalls, &specState); err == nil && specState != "" {
		p.Iteration, p.Phase = specCalls, specState
	} else {
		var phase string
		if err := db.QueryRowContext(ctx, `SELECT phase FROM iterations ORDER BY id DESC LIMIT 1`).Scan(&phase); err == nil && phase != "" {
			p.Phase = phase
		}
	}
	reqs, err := st.PendingHumanRequests(ctx)
	if err != nil {
		return
	}
	var now []Request
	for _, q := range reqs {
		now = append(now, Request{ID: q.ID, Type: q.Type, Prompt: q.Prompt, Options: q.Options})
	}
	if !slices.EqualFunc(now, *sent, func(a, b Request) bool { return a.ID == b.ID }) {
		if err := r.Client.SignalWorkflow(ctx, wfID, runID, SignalPending, Pending{Attempt: attempt, Requests: now}); err == nil {
			*sent = now
		}
	}
	if len(now) == 0 && *stopped {
		return
	}
	q, err := r.Client.QueryWorkflow(ctx, wfID, runID, QueryStatus)
	if err != nil {
		return
	}
	var s Status
	if err := q.Get(&s); err != nil {
		return
	}
	for _, a := range s.Answers {
		if a.Attempt != attempt || !slices.ContainsFunc(now, func(r Request) bool { return r.ID == a.ID }) {
			continue
		}
		if _, err := st.ResolveHumanAs(ctx, a.ID, a.Status, a.Response, store.Answerer{Via: "temporal"}); err != nil && !errors.Is(err, store.ErrNoHumanRequest) {
			r.Log.Warn("resolve human request", "id", a.ID, "err", err)
		}
	}
	if s.Stop != "" && !*stopped {
		if err := st.SetState(ctx, store.KeyStopRequest, s.Stop); err == nil {
			*stopped = true
		}
	}
}

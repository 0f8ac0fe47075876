package temporalrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// exitUsage is ralph's exit code for a usage error, which no retry on
// another worker cures (an agent missing here may be there).
const exitUsage = 2

// repoDir is the cache's clone of remote.
func (r *Runner) repoDir(remote string) string {
	sum := sha256.Sum256([]byte(remote))
	return filepath.Join(r.Cache, "repos", hex.EncodeToString(sum[:])[:16])
}

// prepareStep clones or fetches job.Remote and adds the worktree wt on
// job.Branch at head, which is job.Base or a commit an earlier step
// pushed to job.Branch.
func (r *Runner) prepareStep(ctx context.Context, job Job, head, wt string) (repo string, err error) {
	repo = r.repoDir(job.Remote)
	l := r.repoLock(repo)
	l.Lock()
	defer l.Unlock()
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		_ = os.RemoveAll(repo)
		if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
			return "", err
		}
		if _, err := git.Run(ctx, filepath.Dir(repo), "clone", "--no-checkout", "--", job.Remote, repo); err != nil {
			return "", err
		}
	}
	refspecs := []string{"+" + job.BaseRef + ":" + job.BaseRef}
	if head != job.Base {
		refspecs = append(refspecs, "+refs/heads/"+job.Branch+":refs/ralph/remote/"+job.Branch)
	}
	if _, err := git.Run(ctx, repo, append([]string{"fetch", "--no-tags", "origin"}, refspecs...)...); err != nil {
		return "", err
	}
	// A fresh worktree at head; an earlier attempt's worktree that still
	// holds the branch (its worker lost it, or it was killed) is freed.
	res, err := worktree.Ensure(ctx, repo, wt, worktree.Options{Branch: job.Branch, Start: head, Reset: true})
	if err != nil {
		return "", err
	}
	if res.Freed != "" {
		r.Log.Info("freed the branch from an earlier attempt's worktree", "branch", job.Branch, "worktree", res.Freed)
	}
	return repo, nil
}

// removeWorktree deletes wt and prunes it from repo's worktrees.
func (r *Runner) removeWorktree(repo, wt string) {
	if err := worktree.Remove(context.Background(), repo, wt, ""); err != nil {
		r.Log.Warn("remove worktree", "worktree", wt, "err", err)
	}
	// The worktrees/<workflow> folder goes with its last step.
	dropWorkflowDir(filepath.Dir(wt))
}

// seedStore writes the workflow's record of the spec and its <Human>
// answers into the worktree's store, where the step's pipeline finds them.
func seedStore(ctx context.Context, wt string, in StepInput) error {
	ws := &workspace.Workspace{Root: wt}
	if err := ws.Init(); err != nil {
		return err
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		return err
	}
	defer st.Close()
	if in.Record.ID != "" {
		if err := st.PutSpec(ctx, in.Record); err != nil {
			return err
		}
	}
	for _, a := range in.Answers {
		req, err := st.RequestHuman(ctx, store.HumanRequest{StepKey: a.Key, Prompt: "answered through the workflow"})
		if err != nil {
			return err
		}
		if _, err := st.ResolveHumanAs(ctx, req.ID, a.Status, a.Response, store.Answerer{Via: "temporal"}); err != nil {
			return err
		}
	}
	return nil
}

// stepProgress reads what the step's store says of its agent call.
func stepProgress(ctx context.Context, db string, p *Progress) {
	if _, err := os.Stat(db); err != nil {
		return
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		return
	}
	defer st.Close()
	if role, attempt, events, ok, err := st.SpecCallProgress(ctx); err == nil && ok {
		p.Phase, p.Iteration, p.Events = role, attempt, events
	}
}

// stepArgs puts --step-result after the "specs run" that job.Args start
// with.
func stepArgs(args []string, result string) ([]string, error) {
	if len(args) < 2 || args[0] != "specs" || args[1] != "run" {
		return nil, fmt.Errorf("a spec job's arguments start with specs run, not %q", args)
	}
	out := append([]string{"specs", "run", "--step-result=" + result}, args[2:]...)
	return out, nil
}

// SpecStep is the activity: one step of a spec on this worker, in a
// fresh worktree at in.Head that is removed afterwards; the step's store
// and logs move to the cache's runs/<workflow>/<n>-<step>/.
func (r *Runner) SpecStep(ctx context.Context, in StepInput) (StepResult, error) {
	info := activity.GetInfo(ctx)
	wfID := info.WorkflowExecution.ID
	job := in.Job
	log := r.Log.With("workflow", wfID, "step", in.N, "attempt", info.Attempt)
	log.Info("step starts", "spec", job.Name, "head", in.Head)
	activity.RecordHeartbeat(ctx, Progress{Worker: r.Identity, Attempt: info.Attempt, Phase: "preparing"})
	wt := r.worktreeDir(wfID, fmt.Sprintf("step-%d-attempt-%d", in.N, info.Attempt))
	repo, err := r.prepareStep(ctx, job, in.Head, wt)
	if err != nil {
		return StepResult{}, err
	}
	defer r.removeWorktree(repo, wt)
	if err := seedStore(ctx, wt, in); err != nil {
		return StepResult{}, fmt.Errorf("seed the step's store: %w", err)
	}
	ralphDir := filepath.Join(wt, workspace.Dir)
	resultFile := filepath.Join(ralphDir, "step-result.json")
	args, err := stepArgs(job.Args, resultFile)
	if err != nil {
		return StepResult{}, err
	}
	db := filepath.Join(ralphDir, workspace.Database)
	out, said, err := r.runRalph(ctx, wt, args, func(ctx context.Context) {
		r.beatEvery(ctx, func(ctx context.Context) Progress {
			p := Progress{Worker: r.Identity, Attempt: info.Attempt, Phase: "starting"}
			stepProgress(ctx, db, &p)
			return p
		})
	})
	if ctx.Err() != nil {
		log.Info("step cancelled", "err", ctx.Err())
		return StepResult{}, ctx.Err()
	}
	if err != nil {
		return StepResult{}, err
	}
	if out.ExitCode != 0 {
		err := fmt.Errorf("ralph specs run exited %d on %s: %s", out.ExitCode, r.Identity, said)
		if out.ExitCode == exitUsage {
			return StepResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "ralph", err)
		}
		return StepResult{}, err
	}
	data, err := os.ReadFile(resultFile)
	if err != nil {
		return StepResult{}, fmt.Errorf("read the step's result: %w", err)
	}
	var rep spec.StepReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return StepResult{}, fmt.Errorf("read the step's result: %w", err)
	}
	res := StepResult{Step: string(rep.Step), Record: rep.Record, Problem: rep.Problem, Rejected: rep.Rejected,
		NeedHuman: rep.NeedHuman, Done: rep.Done, Worker: r.Identity, CostUSD: rep.Record.CostUSD - in.Record.CostUSD}
	var p Progress
	stepProgress(ctx, db, &p)
	res.Events = p.Events
	// What the step left (a plan, state markers; the implementer's
	// commits are there already) goes with the branch; .ralph/ stays.
	if _, err := git.Run(ctx, wt, "add", "-A", "--", ".", ":(exclude).ralph"); err != nil {
		return StepResult{}, err
	}
	if _, err := git.Run(ctx, wt, "diff", "--cached", "--quiet"); err != nil {
		if _, err := git.Run(ctx, wt, "commit", "-q", "-m", fmt.Sprintf("ralph: spec %s: %s (step %d)", job.Name, rep.Step, in.N)); err != nil {
			return StepResult{}, err
		}
	}
	if res.Commit, err = git.Line(ctx, wt, "rev-parse", "HEAD"); err != nil {
		return StepResult{}, err
	}
	// A retried step replaces what an earlier attempt may have pushed.
	if _, err := git.Run(ctx, wt, "push", "--force", "origin", "HEAD:refs/heads/"+job.Branch); err != nil {
		return StepResult{}, err
	}
	// Transcripts stay on this worker: the step's store and logs move out
	// of the worktree before it goes.
	dest := filepath.Join(r.Cache, "runs", slug(wfID), fmt.Sprintf("%d-%s", in.N, rep.Step))
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return StepResult{}, err
	}
	_ = os.RemoveAll(dest) // an earlier attempt's, on this worker
	if err := os.Rename(ralphDir, dest); err != nil {
		return StepResult{}, fmt.Errorf("keep the step's transcript: %w", err)
	}
	res.Transcript = r.Identity + ":" + dest
	log.Info("step ends", "step", rep.Step, "problem", rep.Problem, "commit", res.Commit)
	return res, nil
}

// PruneRuns removes the step transcripts under runs/ last changed before
// now-keep, and the worktrees a killed worker left under worktrees/ when
// older than keep and than any activity may run (so never a running
// step's), with the workflow folders they leave empty.
func (r *Runner) PruneRuns(now time.Time, keep time.Duration) (removed int, err error) {
	for _, sub := range []string{"runs", "worktrees"} {
		cutoff := now.Add(-keep)
		if sub == "worktrees" {
			cutoff = now.Add(-max(keep, maxActivity+24*time.Hour))
		}
		n, err := pruneOlder(filepath.Join(r.Cache, sub), cutoff)
		removed += n
		if err != nil {
			return removed, err
		}
		if sub == "worktrees" && n > 0 {
			repos, _ := filepath.Glob(filepath.Join(r.Cache, "repos", "*"))
			for _, repo := range repos {
				_ = worktree.Prune(context.Background(), repo)
			}
		}
	}
	return removed, nil
}

// pruneOlder removes root/<workflow>/<entry> last changed before cutoff,
// and the workflow folders left empty; it returns how many entries went.
func pruneOlder(root string, cutoff time.Time) (removed int, err error) {
	wfs, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", root, err)
	}
	for _, wf := range wfs {
		dir := filepath.Join(root, wf.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		left := len(entries)
		for _, e := range entries {
			if e.Name() == workflowMarker {
				continue
			}
			fi, err := e.Info()
			if err != nil || !fi.ModTime().Before(cutoff) {
				continue
			}
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return removed, fmt.Errorf("prune %s: %w", root, err)
			}
			removed++
			left--
		}
		if left == 0 {
			_ = os.Remove(dir)
		} else {
			dropWorkflowDir(dir)
		}
	}
	return removed, nil
}

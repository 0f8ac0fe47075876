// Package temporalclient is ralph's side of a Temporal cluster on the
// submitting machine: it pushes the base commit workers start from,
// starts task and spec workflows and follows them to the end, lands what
// they pushed through the merge queue, records the workflows a workspace
// submitted, and serves them to status, pending, approve, reject, stop
// and the dashboard.
package temporalclient

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/ralph-harness/ralph/internal/config"
	"github.com/ralph-harness/ralph/internal/engine"
	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/git"
	"github.com/ralph-harness/ralph/internal/mergequeue"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/spec"
	"github.com/ralph-harness/ralph/internal/temporalrun"
	"github.com/ralph-harness/ralph/internal/workspace"
	"github.com/ralph-harness/ralph/internal/worktree"
)

// keyTemporalWorkflow remembers the workflow ralph run --temporal started
// last in this workspace, for status, approve, reject and stop.
const keyTemporalWorkflow = "temporal:workflow"

// Globals is what every command works with (streams, directory, logger).
type Globals = session.Globals

// Flags are the flags that point a command at a Temporal cluster.
type Flags struct {
	Address, Namespace, Queue, Workflow, Remote string
	Heartbeat                                   time.Duration
	MaxAttempts                                 int
	// Local runs the command here although ralph.toml names a cluster.
	Local bool
}

// Mode is what a command does with Temporal: submit work to it, or follow
// the workflows this workspace submitted (any of them, the task or the
// specs).
type Mode int

const (
	ModeSubmit Mode = iota
	ModeFollow
	ModeFollowTask
	ModeFollowSpecs
)

// dialTimeout bounds connecting to the cluster, so an address that does
// not answer fails in seconds.
const dialTimeout = 5 * time.Second

// On says whether the flags point the command at a cluster.
func (t *Flags) On(cfg config.Config) bool {
	return t.Address != "" || (t.Workflow != "" && cfg.Temporal.Address != "")
}

// Dial connects to the cluster within dialTimeout; the error names the
// address and where it came from.
func (t *Flags) Dial(ctx context.Context, g *Globals, cfg config.Config) (client.Client, temporalrun.Settings, error) {
	s := temporalrun.FromConfig(cfg.Temporal, t.Address, t.Namespace, t.Queue)
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := temporalrun.Dial(dctx, s, g.Logger)
	if errors.Is(err, temporalrun.ErrNoAddress) {
		return nil, s, failure.New(failure.Usage, err)
	}
	if err != nil {
		return nil, s, failure.New(failure.Failed, fmt.Errorf("%s: %w", t.addressSource(), err))
	}
	return c, s, nil
}

// addressSource says where the cluster's address came from.
func (t *Flags) addressSource() string {
	if t.Address != "" {
		return "--temporal " + t.Address
	}
	return "[temporal] address in ralph.toml"
}

// pushBase pushes HEAD to the remote as refs/ralph/base/<sha> and returns
// the remote's URL, the ref and the commit.
func pushBase(ctx context.Context, g *Globals, root, remote string) (url, ref, base string, err error) {
	if url, err = git.Line(ctx, root, "remote", "get-url", remote); err != nil {
		url = remote // a URL given as --remote
	}
	if base, err = git.Line(ctx, root, "rev-parse", "HEAD"); err != nil {
		return "", "", "", err
	}
	if st, _ := git.Line(ctx, root, "status", "--porcelain", "--untracked-files=no"); st != "" {
		fmt.Fprintln(g.Stderr, "ralph: uncommitted changes stay here: the workers start from the last commit")
	}
	ref = "refs/ralph/base/" + base
	if _, err = git.Line(ctx, root, "push", "-q", remote, base+":"+ref); err != nil {
		return "", "", "", err
	}
	return url, ref, base, nil
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// progressLine says what a Snapshot shows, or "" when nothing runs.
func progressLine(name string, s temporalrun.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", name)
	sp := s.Spec
	if sp != nil && (s.Closed != "" || s.Result != nil) {
		sp = nil // the result says it all
	}
	if sp != nil && sp.Steps > 0 {
		fmt.Fprintf(&b, " step %d", sp.Steps)
	}
	switch p := s.Running; {
	case p != nil && p.Worker == "":
		fmt.Fprintf(&b, " attempt %d waiting for a worker", p.Attempt)
	case p != nil:
		fmt.Fprintf(&b, " attempt %d", p.Attempt)
		if p.Worker != "" {
			fmt.Fprintf(&b, " on %s", p.Worker)
		}
		if !s.SilentSince.IsZero() {
			fmt.Fprintf(&b, " (not heard from since %s: lost if it stays silent until the heartbeat timeout)", s.SilentSince.Local().Format(time.TimeOnly))
		}
		if p.Phase != "" {
			fmt.Fprintf(&b, " · %s", p.Phase)
		}
		fmt.Fprintf(&b, " · iteration %d · %d events", p.Iteration, p.Events)
	case s.Closed != "":
		fmt.Fprintf(&b, " %s", strings.ToLower(strings.TrimPrefix(s.Closed, "WORKFLOW_EXECUTION_STATUS_")))
	case s.Result != nil:
		// The workflow has its result and is closing: the cluster has
		// not recorded its close yet.
		b.WriteString(" ended")
		if s.Result.Worker != "" {
			fmt.Fprintf(&b, " on %s", s.Result.Worker)
		}
		fmt.Fprintf(&b, " with exit code %d", s.Result.ExitCode)
	case sp != nil && !sp.Retry.IsZero():
		fmt.Fprintf(&b, " retrying at %s", sp.Retry.Local().Format(time.TimeOnly))
	case sp != nil && len(livePending(s)) > 0:
		b.WriteString(" no activity running")
	default:
		b.WriteString(" waiting for a worker")
	}
	if sp != nil {
		r := sp.Record
		if r.State != "" {
			fmt.Fprintf(&b, " · spec %s", r.State)
		}
		fmt.Fprintf(&b, " · plan %d, implement %d, verify %d · failures %d/%d", r.PlanAttempt, r.ImplAttempts, r.VerifyAttempts, sp.Failures, sp.MaxFailures)
	}
	for _, r := range livePending(s) {
		fmt.Fprintf(&b, " · waiting for a human: request %d: %s", r.ID, progress.OneLine(r.Prompt, 60))
	}
	return b.String()
}

// follower prints a workflow's progress lines when they change.
type follower struct {
	g    *Globals
	mu   sync.Mutex
	last map[string]string
	// down is set while the cluster does not answer (see reach).
	down bool
}

func (f *follower) show(id, name string) func(temporalrun.Snapshot) {
	return func(s temporalrun.Snapshot) {
		line := progressLine(name, s)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.last == nil {
			f.last = map[string]string{}
		}
		if f.last[id] != line {
			f.last[id] = line
			fmt.Fprintln(f.g.Stdout, line)
		}
	}
}

// reach says once that the cluster does not answer (err set), and once
// that it answers again (nil), however many workflows f follows.
func (f *follower) reach(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil && !f.down:
		f.down = true
		fmt.Fprintf(f.g.Stderr, "ralph: the Temporal server does not answer (%s); retrying until it does, the workflows go on where they run\n", progress.OneLine(err.Error(), 120))
	case err == nil && f.down:
		f.down = false
		fmt.Fprintln(f.g.Stderr, "ralph: the Temporal server answers again")
	}
}

func (f *follower) printf(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.g.Stdout, format, a...)
}

// PassArgs turns the flags the user set into argv for the ralph on the
// worker, file paths made relative to the repository root.
type PassArgs func(root string) ([]string, error)

// RunTask submits message as a task workflow and follows it (FollowTask);
// pass gives the flags it runs with on the worker.
func RunTask(ctx context.Context, g *Globals, t *Flags, pass PassArgs, message string) error {
	ws, cfg, err := session.OpenWorkspace(ctx, g)
	if err != nil {
		return err
	}
	c, s, err := t.Dial(ctx, g, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	args, err := pass(ws.Root)
	if err != nil {
		return err
	}
	url, ref, base, err := pushBase(ctx, g, ws.Root, t.Remote)
	if err != nil {
		return err
	}
	// The worker's ralph runs the task there (--local), whatever
	// ralph.toml in the repository says about Temporal.
	id := "ralph-task-" + newID()
	job := temporalrun.Job{Kind: temporalrun.KindTask, Name: progress.OneLine(message, 60), Remote: url, BaseRef: ref, Base: base,
		Branch: "ralph/task/" + strings.TrimPrefix(id, "ralph-task-"), Args: append(append([]string{"run", "--local"}, args...), "--", message),
		HeartbeatTimeout: t.Heartbeat, MaxAttempts: t.MaxAttempts}
	started, err := temporalrun.StartTask(ctx, c, s.TaskQueue, id, job)
	if err != nil {
		return err
	}
	if err := recordWorkflows(ctx, ws, submitted{ID: id, Kind: job.Kind, Name: job.Name, Batch: id}); err != nil {
		fmt.Fprintf(g.Stderr, "ralph: could not record workflow %s here (%v): name it with --workflow\n", id, err)
	}
	fmt.Fprintf(g.Stdout, "started workflow %s on %s/%s (branch %s)\n", started.ID, s.Namespace, s.TaskQueue, job.Branch)
	if t.Address != "" {
		fmt.Fprintf(g.Stdout, "answer a human with: ralph approve --temporal %s --workflow %s ID\n", s.Address, id)
	} else {
		fmt.Fprintln(g.Stdout, "answer a human with: ralph approve ID (ralph pending lists them)")
	}
	return FollowTask(ctx, g, c, id)
}

// FollowTask shows a task workflow's progress until it ends and exits
// with the run's exit code. Interrupted, it leaves the workflow running.
func FollowTask(ctx context.Context, g *Globals, c client.Client, id string) error {
	f := &follower{g: g}
	show := f.show(id, "task")
	restarts := 0
	res, err := temporalrun.Wait(ctx, c, id, time.Second, func(s temporalrun.Snapshot) {
		// A lost worker's task starts again elsewhere: say so once.
		for ; restarts < len(s.Restarts); restarts++ {
			f.printf("task: restarted: %s\n", s.Restarts[restarts])
		}
		show(s)
	}, f.reach)
	if err != nil && ctx.Err() != nil {
		return failure.New(engine.Interrupted, fmt.Errorf("interrupted; workflow %s goes on (follow it with ralph resume --temporal, end it with ralph stop --temporal)", id))
	}
	if err != nil {
		return failure.New(failure.Failed, fmt.Errorf("workflow %s: %w", id, err))
	}
	fmt.Fprintf(g.Stdout, "task ended on %s with exit code %d; transcript %s\n", res.Worker, res.ExitCode, res.Transcript)
	if res.Commit != "" {
		fmt.Fprintf(g.Stdout, "branch %s pushed at %s\n", res.Branch, res.Commit)
	}
	if res.ExitCode != 0 {
		return &failure.Exited{Code: res.ExitCode}
	}
	// A completed task lands like ralph run --worktree's: through the
	// merge queue, onto the checkout's branch, once.
	ws, cfg, err := session.OpenWorkspace(ctx, g)
	if err != nil {
		return err
	}
	landedKey := "temporal:landed:" + id
	if _, st, err := session.OpenRunStore(ctx, g); err == nil {
		v, ok, _ := st.State(ctx, landedKey)
		st.Close()
		if ok {
			fmt.Fprintf(g.Stdout, "%s already landed here on %s\n", res.Branch, v)
			return nil
		}
	}
	s, err := temporalrun.Describe(ctx, c, id)
	if err != nil {
		return err
	}
	remote := s.Job.Remote
	if r, err := git.Line(ctx, ws.Root, "remote"); err == nil {
		for _, name := range strings.Fields(r) {
			if u, err := git.Line(ctx, ws.Root, "remote", "get-url", name); err == nil && u == s.Job.Remote {
				remote = name
			}
		}
	}
	lander, err := newQueueLander(ctx, g, ws, cfg, remote)
	if err != nil {
		return err
	}
	if err := lander.Land(ctx, res.Branch, res.Commit); err != nil {
		return failure.New(failure.NotLanded, fmt.Errorf("task could not land: %w", err))
	}
	fmt.Fprintf(g.Stdout, "landed %s\n", res.Branch)
	if _, st, err := session.OpenRunStore(ctx, g); err == nil {
		// ralph resume then says so instead of landing it again.
		_ = st.SetState(ctx, landedKey, time.Now().UTC().Format(time.RFC3339))
		st.Close()
	}
	return nil
}

// queueLander lands the branches workers pushed through the merge queue
// of local parallel runs: each is fetched into a local branch
// ralph/temporal/<branch>, checked out in a worktree under
// .ralph/worktrees/, rebased onto the checkout's branch, gated and
// fast-forwarded; then the worktree and the local branch go.
type queueLander struct {
	root, remote, dir string
	q                 *mergequeue.Queue
}

var _ temporalrun.Lander = (*queueLander)(nil)

func newQueueLander(ctx context.Context, g *Globals, ws *workspace.Workspace, cfg config.Config, remote string) (*queueLander, error) {
	target, err := git.Line(ctx, ws.Root, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return nil, failure.New(failure.Usage, fmt.Errorf("land specs: the checkout is not on a branch: %w", err))
	}
	l := &queueLander{root: ws.Root, remote: remote, dir: filepath.Join(ws.StateDir(), "worktrees")}
	l.q = mergequeue.New(mergequeue.Options{
		Repo: ws.Root, Target: target, Logger: g.Logger,
		Say:   func(line string) { fmt.Fprintln(g.Stderr, "ralph: "+line) },
		Gates: gate.Landing(gate.ForSpecs(cfg)),
	})
	return l, nil
}

// Land implements temporalrun.Lander.
func (l *queueLander) Land(ctx context.Context, branch, commit string) error {
	local := "ralph/temporal/" + branch
	wt := filepath.Join(l.dir, "temporal-"+strings.ReplaceAll(branch, "/", "-"))
	cleanup := func() {
		_ = worktree.Remove(ctx, l.root, wt, local)
	}
	cleanup() // what a killed landing left
	defer cleanup()
	if _, err := git.Run(ctx, l.root, "fetch", "-q", "--no-tags", l.remote, "+refs/heads/"+branch+":refs/heads/"+local); err != nil {
		return err
	}
	if commit != "" {
		if _, err := git.Run(ctx, l.root, "branch", "-f", local, commit); err != nil {
			return err
		}
	}
	_, err := worktree.Ensure(ctx, l.root, wt, worktree.Options{Branch: local})
	if err != nil {
		return err
	}
	lr, err := l.q.Land(ctx, mergequeue.Request{Branch: local, Worktree: wt, Name: branch})
	if err != nil {
		return err
	}
	if lr.Outcome != mergequeue.Landed {
		return fmt.Errorf("%s: %s (branch %s is on the remote)", lr.Outcome, firstLineOf(lr.Reason), branch)
	}
	return nil
}

// specWorkflowID names spec sp's workflow for the repository at url: the
// same spec of the same repository always gets the same id.
func specWorkflowID(url string, sp spec.Spec) string {
	sum := sha256.Sum256([]byte(url))
	return "ralph-spec-" + hex.EncodeToString(sum[:])[:12] + "-" + sp.ID
}

// RunSpecs submits the specs of layout (those only selects) as spec
// workflows, follows them and lands each one that completes; pass gives
// the flags they run with on the workers, maxAttempts (when positive)
// bounds each step's attempts.
func RunSpecs(ctx context.Context, g *Globals, t *Flags, ws *workspace.Workspace, cfg config.Config, layout spec.Layout, pass PassArgs, only string, maxAttempts int) error {
	specs, err := layout.Discover()
	if err == nil {
		specs, err = spec.Select(specs, only)
	}
	if err == nil && len(specs) == 0 {
		err = fmt.Errorf("%w in %s", spec.ErrNoSpecs, layout.Dir)
	}
	if err != nil {
		return failure.New(failure.Usage, err)
	}
	relDir, err := filepath.Rel(ws.Root, layout.Dir)
	if err != nil {
		return err
	}
	passed, err := pass(ws.Root)
	if err != nil {
		return err
	}
	var flags []string
	for _, a := range passed {
		if !strings.HasPrefix(a, "--only=") {
			flags = append(flags, a)
		}
	}
	stepAttempts := cfg.Specs.MaxAttempts
	if maxAttempts > 0 {
		stepAttempts = maxAttempts
	}
	c, s, err := t.Dial(ctx, g, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	url, ref, base, err := pushBase(ctx, g, ws.Root, t.Remote)
	if err != nil {
		return err
	}
	lander, err := newQueueLander(ctx, g, ws, cfg, t.Remote)
	if err != nil {
		return err
	}
	f := &follower{g: g}
	type outcome struct {
		sp  spec.Spec
		res temporalrun.Result
		err error
	}
	results := make(chan outcome, len(specs))
	batch := newID()
	for _, sp := range specs {
		id := specWorkflowID(url, sp)
		job := temporalrun.Job{Kind: temporalrun.KindSpec, Name: sp.ID, Remote: url, BaseRef: ref, Base: base,
			Branch:           sp.Branch(),
			Args:             append(append([]string{"specs", "run", "--local", "--only=" + sp.Rel}, flags...), "--", filepath.ToSlash(relDir)),
			HeartbeatTimeout: t.Heartbeat, MaxAttempts: t.MaxAttempts,
			StepAttempts: stepAttempts, Backoff: cfg.Specs.Backoff.Duration}
		started, err := temporalrun.Start(ctx, c, s.TaskQueue, id, job)
		if err != nil {
			return err
		}
		// Recorded as it starts, so status, approve and stop follow it
		// while this command waits.
		if err := recordWorkflows(ctx, ws, submitted{ID: id, Kind: job.Kind, Name: job.Name, Batch: batch}); err != nil {
			f.printf("ralph: could not record workflow %s here (%v): name it with --workflow\n", id, err)
		}
		verb := "started"
		if started.Attached {
			verb = "attached to"
		}
		f.printf("%s: %s workflow %s\n", sp.ID, verb, id)
		go func() {
			res, err := temporalrun.Wait(ctx, c, id, time.Second, f.show(id, sp.ID), f.reach)
			results <- outcome{sp, res, err}
		}()
	}
	var failed []string
	for range specs {
		o := <-results
		switch {
		case o.err != nil:
			failed = append(failed, o.sp.ID)
			f.printf("%s: failed: %v\n", o.sp.ID, o.err)
		case o.res.ExitCode != 0:
			failed = append(failed, o.sp.ID)
			reason := ""
			if o.res.Reason != "" {
				reason = ": " + o.res.Reason
			}
			f.printf("%s: failed on %s (exit %d)%s; transcript %s\n", o.sp.ID, o.res.Worker, o.res.ExitCode, reason, o.res.Transcript)
		default:
			if err := lander.Land(ctx, o.res.Branch, o.res.Commit); err != nil {
				failed = append(failed, o.sp.ID)
				f.printf("%s: not landed: %v\n", o.sp.ID, err)
				continue
			}
			f.printf("%s: landed %s from %s; transcript %s\n", o.sp.ID, o.res.Branch, o.res.Worker, o.res.Transcript)
		}
	}
	if len(failed) > 0 {
		return failure.New(failure.Failed, fmt.Errorf("%d of %d specs failed: %s", len(failed), len(specs), strings.Join(failed, ", ")))
	}
	return nil
}

// SpecsStatus shows where each spec's workflow stands.
func SpecsStatus(ctx context.Context, g *Globals, t *Flags, ws *workspace.Workspace, cfg config.Config, layout spec.Layout) error {
	specs, err := layout.Discover()
	if err != nil {
		return failure.New(failure.Usage, err)
	}
	url, err := git.Line(ctx, ws.Root, "remote", "get-url", t.Remote)
	if err != nil {
		url = t.Remote
	}
	c, _, err := t.Dial(ctx, g, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, sp := range specs {
		s, err := temporalrun.Describe(ctx, c, specWorkflowID(url, sp))
		switch {
		case err != nil:
			fmt.Fprintf(g.Stdout, "%s: no workflow\n", sp.ID)
		case s.Result != nil:
			reason := ""
			if s.Result.Reason != "" {
				reason = " (" + s.Result.Reason + ")"
			}
			fmt.Fprintf(g.Stdout, "%s: ended on %s with exit code %d%s; %s\n", sp.ID, s.Result.Worker, s.Result.ExitCode, reason, pushed(s.Result))
		default:
			fmt.Fprintln(g.Stdout, progressLine(sp.ID, s))
		}
	}
	return nil
}

// workflowID is --workflow, else the one ralph run --temporal started
// last in this workspace.
func (t *Flags) workflowID(ctx context.Context, g *Globals) (string, error) {
	if t.Workflow != "" {
		return t.Workflow, nil
	}
	_, st, err := session.OpenRunStore(ctx, g)
	if err == nil {
		defer st.Close()
		if id, ok, _ := st.State(ctx, keyTemporalWorkflow); ok && id != "" {
			return id, nil
		}
	}
	return "", failure.New(failure.Usage, errors.New("no Temporal workflow started here: name one with --workflow ID"))
}

// WithWorkflow dials the cluster and calls fn with the workflow the
// flags name (see workflowID).
func WithWorkflow(ctx context.Context, g *Globals, t *Flags, fn func(c client.Client, id string) error) error {
	id, err := t.workflowID(ctx, g)
	if err != nil {
		return err
	}
	return t.withClient(ctx, g, func(c client.Client) error { return fn(c, id) })
}

package temporalclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ralph-harness/ralph/internal/failure"
	"github.com/ralph-harness/ralph/internal/progress"
	"github.com/ralph-harness/ralph/internal/serve"
	"github.com/ralph-harness/ralph/internal/session"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/temporalrun"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// keyTemporalWorkflows lists the workflows this workspace submitted,
// newest first (JSON []submitted), for status, pending, approve, reject,
// stop and serve.
const keyTemporalWorkflows = "temporal:workflows"

// maxRecorded bounds the workflows a workspace remembers.
const maxRecorded = 30

// queryTimeout bounds a status query: a workflow no worker serves does
// not hold a command up.
const queryTimeout = 3 * time.Second

// busyQueryTimeout is how much longer a status query waits when the
// workflow's worker heartbeats, so is there but slow to answer.
const busyQueryTimeout = 10 * time.Second

// submitted is a workflow this workspace started or attached to.
type submitted struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Batch names the submission (one ralph run, one ralph specs run).
	Batch string    `json:"batch"`
	At    time.Time `json:"at"`
}

// recordWorkflows puts recs first in the workspace's list of workflows;
// a task's also becomes the one ralph resume follows.
func recordWorkflows(ctx context.Context, ws *workspace.Workspace, recs ...submitted) error {
	if len(recs) == 0 {
		return nil
	}
	if err := ws.Init(); err != nil {
		return err
	}
	st, err := session.OpenStore(ctx, ws)
	if err != nil {
		return err
	}
	defer st.Close()
	old, err := readRecords(ctx, st)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	list := make([]submitted, 0, len(recs)+len(old))
	for _, r := range recs {
		r.At = now
		list = append(list, r)
	}
	for _, r := range old {
		if !slices.ContainsFunc(recs, func(n submitted) bool { return n.ID == r.ID }) {
			list = append(list, r)
		}
	}
	list = list[:min(len(list), maxRecorded)]
	data, err := json.Marshal(list)
	if err != nil {
		return err
	}
	if err := st.SetState(ctx, keyTemporalWorkflows, string(data)); err != nil {
		return err
	}
	for _, r := range recs {
		if r.Kind == temporalrun.KindTask {
			return st.SetState(ctx, keyTemporalWorkflow, r.ID)
		}
	}
	return nil
}

// readRecords reads the list; the task workflow an older ralph recorded
// alone joins it.
func readRecords(ctx context.Context, st *store.Store) ([]submitted, error) {
	var list []submitted
	if v, ok, err := st.State(ctx, keyTemporalWorkflows); err != nil {
		return nil, err
	} else if ok && v != "" {
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			return nil, fmt.Errorf("the workflows recorded here: %w", err)
		}
	}
	if id, ok, _ := st.State(ctx, keyTemporalWorkflow); ok && id != "" &&
		!slices.ContainsFunc(list, func(r submitted) bool { return r.ID == id }) {
		list = append(list, submitted{ID: id, Kind: temporalrun.KindTask, Batch: id})
	}
	return list, nil
}

// recordedWorkflows lists the workflows this workspace submitted; none
// when no run has created the database.
func recordedWorkflows(ctx context.Context, ws *workspace.Workspace) ([]submitted, error) {
	if _, err := os.Stat(ws.Path(workspace.Database)); err != nil {
		return nil, nil
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return readRecords(ctx, st)
}

// FollowsWorkflows says whether a command in mode, with ralph.toml's
// address and no flag, follows this workspace's workflows; when not, why
// (a line for stderr). It does when the workspace submitted some and has
// not run a task here (--local) since.
func FollowsWorkflows(ctx context.Context, ws *workspace.Workspace, mode Mode) (bool, string) {
	recs, err := recordedWorkflows(ctx, ws)
	if err != nil {
		return false, fmt.Sprintf("the workflows recorded here cannot be read (%v): using the local store", err)
	}
	i := slices.IndexFunc(recs, func(r submitted) bool {
		switch mode {
		case ModeFollowTask:
			return r.Kind == temporalrun.KindTask
		case ModeFollowSpecs:
			return r.Kind == temporalrun.KindSpec
		}
		return true
	})
	if i < 0 {
		return false, "no Temporal-backed run from this workspace ([temporal] address in ralph.toml): using the local store"
	}
	if t, err := latestLocalTask(ctx, ws); err == nil && !recs[i].At.IsZero() && t.StartedAt.After(recs[i].At) {
		return false, fmt.Sprintf("task %d ran here (--local) after this workspace's last Temporal workflow: using the local store (--workflow ID follows a workflow)", t.Number)
	}
	return true, ""
}

// latestLocalTask is the last task run in this checkout.
func latestLocalTask(ctx context.Context, ws *workspace.Workspace) (store.Task, error) {
	if _, err := os.Stat(ws.Path(workspace.Database)); err != nil {
		return store.Task{}, store.ErrNoTask
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		return store.Task{}, err
	}
	defer st.Close()
	return st.LatestTask(ctx)
}

// targets are the workflows a following command acts on: --workflow's,
// else the ones this workspace submitted.
func (t *Flags) targets(ctx context.Context, g *Globals) ([]submitted, error) {
	if t.Workflow != "" {
		return []submitted{{ID: t.Workflow, Batch: t.Workflow}}, nil
	}
	ws, _, err := session.OpenWorkspace(ctx, g)
	if err != nil {
		return nil, err
	}
	recs, err := recordedWorkflows(ctx, ws)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, failure.New(failure.Usage, errors.New("no Temporal workflow started here: name one with --workflow ID"))
	}
	return recs, nil
}

// withTargets dials the cluster and calls fn with the targets.
func withTargets(ctx context.Context, g *Globals, t *Flags, fn func(c client.Client, recs []submitted) error) error {
	recs, err := t.targets(ctx, g)
	if err != nil {
		return err
	}
	return t.withClient(ctx, g, func(c client.Client) error { return fn(c, recs) })
}

// withClient dials the cluster the workspace's flags and ralph.toml name
// and calls fn with the client, closed afterwards. With --workflow and
// --temporal it needs no workspace: the flags name all it works on.
func (t *Flags) withClient(ctx context.Context, g *Globals, fn func(c client.Client) error) error {
	_, cfg, err := session.OpenWorkspace(ctx, g)
	if err != nil && (t.Workflow == "" || t.Address == "") {
		return err
	}
	c, _, err := t.Dial(ctx, g, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// describeRun is a workflow's Snapshot, within queryTimeout. A closed
// workflow no worker answers a query for shows what its history holds;
// a running one keeps what its heartbeat says, with the query's error.
func describeRun(ctx context.Context, c client.Client, rec submitted) (temporalrun.Snapshot, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	s, err := temporalrun.Describe(qctx, c, rec.ID)
	if err != nil && ctx.Err() == nil && heard(s) {
		// Its worker heartbeats: it is there, only slow to answer (a
		// loaded machine). Give the query longer before saying so.
		bctx, bcancel := context.WithTimeout(ctx, busyQueryTimeout)
		s, err = temporalrun.Describe(bctx, c, rec.ID)
		bcancel()
	}
	if s.Job.Kind == "" {
		s.Job.Kind, s.Job.Name = rec.Kind, rec.Name
	}
	if err == nil || ctx.Err() != nil {
		return s, err
	}
	if s.Closed == "" {
		if d, derr := c.DescribeWorkflowExecution(ctx, rec.ID, ""); derr != nil {
			return s, err // no such workflow, or the cluster is away
		} else if d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			s.Error = "no worker answered the status query: is a ralph worker serving the task queue?"
			if heard(s) {
				s.Error = fmt.Sprintf("%s works on it but did not answer the status query within %s (a busy machine); its heartbeat says what runs", s.Running.Worker, queryTimeout+busyQueryTimeout)
			}
			return s, nil
		}
	}
	hctx, hcancel := context.WithTimeout(ctx, queryTimeout)
	defer hcancel()
	var res temporalrun.Result
	if herr := c.GetWorkflow(hctx, rec.ID, "").Get(hctx, &res); herr == nil {
		s.Result = &res
	} else {
		s.Error = herr.Error()
	}
	s.Done = true
	if s.Closed == "" {
		s.Closed = "WORKFLOW_EXECUTION_STATUS_CLOSED"
	}
	return s, nil
}

// heard reports whether s names a worker that heartbeats for the attempt.
func heard(s temporalrun.Snapshot) bool {
	return s.Running != nil && s.Running.Worker != "" && s.SilentSince.IsZero()
}

// running reports whether the workflow has not ended.
func running(s temporalrun.Snapshot) bool { return s.Closed == "" && s.Result == nil }

// shown is a workflow with its snapshot.
type shown struct {
	rec submitted
	s   temporalrun.Snapshot
}

// describeAll describes recs: with runningOnly, the ones that run;
// otherwise the latest submission and whatever else still runs.
// Workflows that cannot be read are reported on stderr and left out.
func describeAll(ctx context.Context, g *Globals, c client.Client, recs []submitted, runningOnly bool) ([]shown, error) {
	var out []shown
	failed := 0
	for i, r := range recs {
		latest := i == 0 || r.Batch == recs[0].Batch
		if runningOnly || !latest {
			d, err := c.DescribeWorkflowExecution(ctx, r.ID, "")
			if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				continue
			}
		}
		s, err := describeRun(ctx, c, r)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			failed++
			fmt.Fprintf(g.Stderr, "ralph: workflow %s: %v\n", r.ID, err)
			continue
		}
		out = append(out, shown{r, s})
	}
	if len(out) == 0 && failed > 0 {
		return nil, failure.New(failure.Failed, errors.New("none of this workspace's workflows could be read"))
	}
	return out, nil
}

// Status shows where the workspace's workflows (or --workflow's)
// stand, as JSON with asJSON.
func Status(ctx context.Context, g *Globals, t *Flags, asJSON bool) error {
	return withTargets(ctx, g, t, func(c client.Client, recs []submitted) error {
		list, err := describeAll(ctx, g, c, recs, false)
		if err != nil {
			return err
		}
		if asJSON {
			runs := make([]serve.RemoteRun, len(list))
			for i, x := range list {
				runs[i] = remoteRun(x.rec.ID, x.s)
			}
			b, err := json.MarshalIndent(runs, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(g.Stdout, string(b))
			return nil
		}
		for _, x := range list {
			s := x.s
			fmt.Fprintf(g.Stdout, "workflow %s (%s %s)\n", x.rec.ID, s.Job.Kind, s.Job.Name)
			fmt.Fprintln(g.Stdout, progressLine("  state", s))
			if s.Stop != "" {
				fmt.Fprintf(g.Stdout, "  stop requested: %s\n", s.Stop)
			}
			for _, r := range s.Restarts {
				fmt.Fprintf(g.Stdout, "  restarted: %s\n", r)
			}
			if r := s.Result; r != nil {
				fmt.Fprintf(g.Stdout, "  ended on %s with exit code %d; %s; transcript %s\n", r.Worker, r.ExitCode, pushed(r), r.Transcript)
			}
			if s.Error != "" {
				fmt.Fprintf(g.Stdout, "  error: %s\n", s.Error)
			}
		}
		return nil
	})
}

// waiting lists the running workflows among recs with what they wait on.
func waiting(ctx context.Context, g *Globals, c client.Client, recs []submitted) ([]shown, error) {
	list, err := describeAll(ctx, g, c, recs, true)
	if err != nil {
		return nil, err
	}
	// A workflow that ended between the two looks is not waiting.
	return slices.DeleteFunc(list, func(x shown) bool { return !running(x.s) }), nil
}

// Pending lists the requests the workflows wait on for a human.
func Pending(ctx context.Context, g *Globals, t *Flags) error {
	return withTargets(ctx, g, t, func(c client.Client, recs []submitted) error {
		list, err := waiting(ctx, g, c, recs)
		if err != nil {
			return err
		}
		n := 0
		for _, x := range list {
			for _, r := range livePending(x.s) {
				n++
				fmt.Fprintf(g.Stdout, "%d\t%s\t%s", r.ID, r.Type, progress.OneLine(r.Prompt, 100))
				if len(list) > 1 {
					fmt.Fprintf(g.Stdout, "\tworkflow %s", x.rec.ID)
				}
				fmt.Fprintln(g.Stdout)
			}
		}
		if n == 0 {
			fmt.Fprintln(g.Stdout, "no pending requests")
		}
		return nil
	})
}

// Answer approves or rejects (status) request arg of the workflow that
// waits on it, with response.
func Answer(ctx context.Context, g *Globals, t *Flags, arg, status, response string) error {
	var reqID int64
	if _, err := fmt.Sscan(strings.TrimPrefix(arg, "#"), &reqID); err != nil || reqID <= 0 {
		return failure.New(failure.Usage, fmt.Errorf("request id %q is not a number (see `ralph pending`)", arg))
	}
	return withTargets(ctx, g, t, func(c client.Client, recs []submitted) error {
		id := recs[0].ID
		if t.Workflow == "" {
			list, err := waiting(ctx, g, c, recs)
			if err != nil {
				return err
			}
			var ids []string
			for _, x := range list {
				if slices.ContainsFunc(livePending(x.s), func(r temporalrun.Request) bool { return r.ID == reqID }) {
					ids = append(ids, x.rec.ID)
				}
			}
			switch len(ids) {
			case 0:
				return failure.New(failure.Failed, fmt.Errorf("no workflow of this workspace waits on request %d (see `ralph pending`)", reqID))
			case 1:
				id = ids[0]
			default:
				return failure.New(failure.Usage, fmt.Errorf("request %d is pending in workflows %s: name one with --workflow ID", reqID, strings.Join(ids, ", ")))
			}
		}
		r, err := temporalrun.SendAnswer(ctx, c, id, reqID, status, response)
		if err != nil {
			return failure.New(failure.Failed, err)
		}
		fmt.Fprintf(g.Stdout, "%s request %d of workflow %s: %s\n", status, reqID, id, progress.OneLine(r.Prompt, 100))
		return nil
	})
}

// Stop asks the running workflows to stop after their current
// iteration (a spec: its current step), for reason.
func Stop(ctx context.Context, g *Globals, t *Flags, reason string) error {
	return withTargets(ctx, g, t, func(c client.Client, recs []submitted) error {
		ids := []string{recs[0].ID}
		if t.Workflow == "" {
			list, err := waiting(ctx, g, c, recs)
			if err != nil {
				return err
			}
			ids = nil
			for _, x := range list {
				ids = append(ids, x.rec.ID)
			}
			if len(ids) == 0 {
				return failure.New(failure.Failed, errors.New("no Temporal workflow of this workspace is running"))
			}
		}
		for _, id := range ids {
			if err := temporalrun.Stop(ctx, c, id, reason); err != nil {
				return failure.New(failure.Failed, err)
			}
			fmt.Fprintf(g.Stdout, "stop requested; workflow %s stops after its current iteration (a spec: its current step)\n", id)
		}
		return nil
	})
}

// remoteRun is a workflow as the dashboard shows it.
func remoteRun(id string, s temporalrun.Snapshot) serve.RemoteRun {
	r := serve.RemoteRun{ID: id, Kind: s.Job.Kind, Name: s.Job.Name, Running: running(s), Stop: s.Stop, Error: s.Error,
		State:   strings.TrimSpace(strings.TrimPrefix(progressLine("", s), ":")),
		Pending: humanRequests(s), Restarts: s.Restarts}
	if s.Closed != "" {
		r.Closed = strings.ToLower(strings.TrimPrefix(s.Closed, "WORKFLOW_EXECUTION_STATUS_"))
	}
	if p := s.Running; p != nil {
		r.Worker, r.Attempt, r.Iteration, r.Events, r.Phase = p.Worker, p.Attempt, p.Iteration, p.Events, p.Phase
	}
	if res := s.Result; res != nil {
		r.Ended, r.ExitCode, r.Branch, r.Commit, r.Transcript = true, res.ExitCode, res.Branch, res.Commit, res.Transcript
		if r.Worker == "" {
			r.Worker = res.Worker
		}
	}
	if r.Attempt == 0 {
		r.Attempt = int32(s.Attempts)
	}
	return r
}

// temporalRemote serves this workspace's workflows on the dashboard,
// through the same query and signals as ralph status, approve and stop.
type temporalRemote struct {
	c client.Client
	// recs lists the workflows to show, newest first.
	recs func(ctx context.Context) ([]submitted, error)
	mu   sync.Mutex
	// ended keeps the workflows that ended: they no longer change until
	// a submission starts one with the same id again (a spec rerun),
	// which records it anew; so the key is the id and the record's time.
	ended map[string]temporalrun.Snapshot
}

var _ serve.Remote = (*temporalRemote)(nil)

// snapshots describes every workflow, the ended ones from the cache.
func (r *temporalRemote) snapshots(ctx context.Context) ([]shown, error) {
	recs, err := r.recs(ctx)
	if err != nil {
		return nil, err
	}
	var out []shown
	var firstErr error
	failed := 0
	for _, rec := range recs {
		key := rec.ID + "@" + rec.At.String()
		r.mu.Lock()
		s, ok := r.ended[key]
		r.mu.Unlock()
		if !ok {
			s, err = describeRun(ctx, r.c, rec)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				failed++
				if firstErr == nil {
					firstErr = err
				}
				s = temporalrun.Snapshot{Status: temporalrun.Status{Job: temporalrun.Job{Kind: rec.Kind, Name: rec.Name}, Error: err.Error()},
					Closed: "WORKFLOW_EXECUTION_STATUS_UNSPECIFIED"}
			} else if !running(s) {
				r.mu.Lock()
				if r.ended == nil {
					r.ended = map[string]temporalrun.Snapshot{}
				}
				r.ended[key] = s
				r.mu.Unlock()
			}
		}
		out = append(out, shown{rec, s})
	}
	if failed > 0 && failed == len(recs) {
		return nil, firstErr // the cluster is away, most likely
	}
	return out, nil
}

// Runs implements serve.Remote.
func (r *temporalRemote) Runs(ctx context.Context) ([]serve.RemoteRun, error) {
	list, err := r.snapshots(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]serve.RemoteRun, len(list))
	for i, x := range list {
		out[i] = remoteRun(x.rec.ID, x.s)
	}
	return out, nil
}

// temporalStatus is GET /api/status: the newest workflow's state, and
// every workflow's.
type temporalStatus struct {
	Workflow  string               `json:"workflow"`
	Kind      string               `json:"kind"`
	Name      string               `json:"name"`
	State     string               `json:"state"`
	Worker    string               `json:"worker,omitempty"`
	Attempt   int32                `json:"attempt,omitempty"`
	Pending   []store.HumanRequest `json:"pending"`
	Stop      string               `json:"stop,omitempty"`
	Closed    string               `json:"closed,omitempty"`
	Result    *temporalrun.Result  `json:"result,omitempty"`
	Error     string               `json:"error,omitempty"`
	Workflows []serve.RemoteRun    `json:"workflows"`
}

// Status implements serve.Remote.
func (r *temporalRemote) Status(ctx context.Context) (any, error) {
	list, err := r.snapshots(ctx)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return temporalStatus{Pending: []store.HumanRequest{}, Workflows: []serve.RemoteRun{}}, nil
	}
	x := list[0]
	s := x.s
	out := temporalStatus{Workflow: x.rec.ID, Kind: s.Job.Kind, Name: s.Job.Name, State: strings.TrimSpace(strings.TrimPrefix(progressLine("", s), ":")),
		Pending: humanRequests(s), Stop: s.Stop, Closed: s.Closed, Result: s.Result, Error: s.Error}
	if s.Running != nil {
		out.Worker, out.Attempt = s.Running.Worker, s.Running.Attempt
	}
	for _, y := range list {
		out.Workflows = append(out.Workflows, remoteRun(y.rec.ID, y.s))
	}
	return out, nil
}

// Answer implements serve.Remote.
func (r *temporalRemote) Answer(ctx context.Context, run string, id int64, status, response string) error {
	_, err := temporalrun.SendAnswer(ctx, r.c, run, id, status, response)
	if errors.Is(err, temporalrun.ErrNoRequest) {
		return fmt.Errorf("%w: %w", store.ErrNoHumanRequest, err)
	}
	return err
}

// Stop implements serve.Remote.
func (r *temporalRemote) Stop(ctx context.Context, run, reason string) error {
	return temporalrun.Stop(ctx, r.c, run, reason)
}

// Serve serves the dashboard (serveDashboard) for the workflows this
// workspace submitted (or --workflow's).
func Serve(ctx context.Context, g *Globals, t *Flags, serveDashboard func(serve.Remote) error) error {
	_, cfg, err := session.OpenWorkspace(ctx, g)
	if err != nil {
		return err
	}
	if _, err := t.targets(ctx, g); err != nil {
		return err
	}
	c, _, err := t.Dial(ctx, g, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return serveDashboard(&temporalRemote{c: c, recs: func(ctx context.Context) ([]submitted, error) { return t.targets(ctx, g) }})
}

// pushed says what an ended workflow left on the remote: its branch at
// the commit it pushed, or that it pushed nothing (a task that was
// stopped or failed pushes no commit).
func pushed(r *temporalrun.Result) string {
	if r.Commit == "" {
		return "nothing pushed"
	}
	return fmt.Sprintf("branch %s at %s", r.Branch, r.Commit)
}

// humanRequests are a workflow's pending requests as the store shows them.
func humanRequests(s temporalrun.Snapshot) []store.HumanRequest {
	out := []store.HumanRequest{}
	for _, q := range livePending(s) {
		out = append(out, store.HumanRequest{ID: q.ID, Type: q.Type, Prompt: q.Prompt, Options: q.Options, Status: store.HumanPending, CreatedAt: q.CreatedAt})
	}
	return out
}

// livePending is what the workflow waits on now: nothing once it ended
// (the last attempt's requests are not cleared when it does).
func livePending(s temporalrun.Snapshot) []temporalrun.Request {
	if s.Closed != "" || s.Result != nil {
		return nil
	}
	return s.Pending.Requests
}

// firstLineOf is the first line of s, trimmed.
func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

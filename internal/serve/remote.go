package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/store"
)

// Remote is the runs a workspace submitted elsewhere (Temporal
// workflows): the dashboard shows them and sends them answers and stop
// requests instead of reading and writing this workspace's store.
type Remote interface {
	// Status is the body of GET /api/status.
	Status(ctx context.Context) (any, error)
	// Runs lists the workspace's runs, newest first.
	Runs(ctx context.Context) ([]RemoteRun, error)
	// Answer approves or rejects pending request id of run; an error
	// wrapping store.ErrNoHumanRequest means the run waits on no such
	// request.
	Answer(ctx context.Context, run string, id int64, status, response string) error
	// Stop asks run to stop after its current iteration.
	Stop(ctx context.Context, run, reason string) error
}

// RemoteRun is one run of a Remote as the dashboard shows it.
type RemoteRun struct {
	// ID is the run's name there (the workflow id).
	ID string `json:"id"`
	// Kind is task or spec; Name the task's message or the spec's id.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// State says in a line what the run does now.
	State     string `json:"state"`
	Phase     string `json:"phase,omitempty"`
	Worker    string `json:"worker,omitempty"`
	Attempt   int32  `json:"attempt,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	Events    int    `json:"events,omitempty"`
	// Running is true until the run ends; Closed is how it ended.
	Running bool   `json:"running"`
	Closed  string `json:"closed,omitempty"`
	// Stop is the reason of a stop request, once one was made.
	Stop string `json:"stop,omitempty"`
	// Pending are the <Human> requests the run waits on.
	Pending []store.HumanRequest `json:"pending"`
	// Ended is true once the run has a result.
	Ended      bool   `json:"ended"`
	ExitCode   int    `json:"exit_code"`
	Branch     string `json:"branch,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Transcript string `json:"transcript,omitempty"`
	Error      string `json:"error,omitempty"`
	// Restarts says, a line each, why the run started again elsewhere
	// (its worker was lost).
	Restarts []string `json:"restarts,omitempty"`
}

// remoteNote is what a page that shows this checkout's own runs says
// when the dashboard follows remote ones.
const remoteNote = "This dashboard follows Temporal workflows: "

var remoteNotes = map[string]string{
	"events":    remoteNote + "each run's events stay in its worker's store (the transcript the overview names), not in this checkout's.",
	"gates":     remoteNote + "gate results are recorded on the worker that ran the attempt; the overview shows each workflow's outcome.",
	"plan":      remoteNote + "a run's plan lives in its worktree on the worker.",
	"approvals": remoteNote + "answers are signals to the workflow; what a workflow waits on shows at the top of every page.",
	"snapshots": remoteNote + "snapshots and rollback are for runs in this checkout; a Temporal-backed run works in a worktree on its worker and lands through the merge queue (`ralph serve --local` shows this checkout's snapshots).",
	"specs":     remoteNote + "each spec submitted runs as a workflow; the spec logs stay on the workers.",
	"api":       "not served for Temporal-backed runs: their events, snapshots and spec logs stay on the workers; GET /api/status and /api/pending follow the workflows",
}

// runs asks the remote for its runs.
func (s *Server) runs(ctx context.Context) ([]RemoteRun, error) {
	runs, err := s.opt.Remote.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("ask the workflows: %w", err)
	}
	return runs, nil
}

// remotePending is a pending request with the run that waits on it.
type remotePending struct {
	store.HumanRequest
	Workflow string `json:"workflow"`
}

// pendingOf lists what the running runs wait on.
func pendingOf(runs []RemoteRun) []remotePending {
	out := []remotePending{}
	for _, r := range runs {
		if !r.Running {
			continue
		}
		for _, q := range r.Pending {
			out = append(out, remotePending{HumanRequest: q, Workflow: r.ID})
		}
	}
	return out
}

// answerRemote sends the answer to the run that waits on request id (the
// one body names, when several do).
func (s *Server) answerRemote(w http.ResponseWriter, r *http.Request, run string, id int64, status, response string) {
	ctx := r.Context()
	runs, err := s.runs(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	var found []remotePending
	for _, q := range pendingOf(runs) {
		if q.ID == id && (run == "" || q.Workflow == run) {
			found = append(found, q)
		}
	}
	switch len(found) {
	case 0:
		where := "in this workspace's workflows"
		if run != "" {
			where = "in workflow " + run
		}
		s.jsonError(w, http.StatusNotFound, fmt.Sprintf("no pending request %d %s", id, where))
		return
	case 1:
	default:
		var ids []string
		for _, q := range found {
			ids = append(ids, q.Workflow)
		}
		s.jsonError(w, http.StatusConflict, fmt.Sprintf("request %d is pending in workflows %s: name one as \"workflow\" in the body", id, strings.Join(ids, ", ")))
		return
	}
	req := found[0]
	if err := req.CheckAnswer(status, response); err != nil {
		s.jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	err = s.opt.Remote.Answer(ctx, req.Workflow, id, status, response)
	switch {
	case errors.Is(err, store.ErrNoHumanRequest):
		s.jsonError(w, http.StatusNotFound, fmt.Sprintf("no pending request %d in workflow %s", id, req.Workflow))
		return
	case err != nil:
		s.apiFail(w, err)
		return
	}
	s.log.Info("answered", "request", id, "status", status, "workflow", req.Workflow)
	s.refreshRemote(ctx)
	req.Status, req.Response = status, response
	s.writeJSON(w, http.StatusOK, struct {
		answerResult
		Workflow string `json:"workflow"`
	}{answerResult{Request: req.HumanRequest, Message: fmt.Sprintf("%s request %d of workflow %s; the workflow continues", status, id, req.Workflow)}, req.Workflow})
}

// stopRemote sends the stop signal to the running run body names, or to
// every running run.
func (s *Server) stopRemote(w http.ResponseWriter, r *http.Request, run, reason string) {
	ctx := r.Context()
	runs, err := s.runs(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	var targets []string
	for _, x := range runs {
		if x.Running && (run == "" || x.ID == run) {
			targets = append(targets, x.ID)
		}
	}
	if len(targets) == 0 {
		msg := "no Temporal workflow of this workspace is running"
		if run != "" {
			msg = "workflow " + run + " is not one of this workspace's running workflows"
		}
		s.jsonError(w, http.StatusConflict, msg)
		return
	}
	for _, id := range targets {
		if err := s.opt.Remote.Stop(ctx, id, reason); err != nil {
			s.apiFail(w, err)
			return
		}
		s.log.Info("stop requested", "workflow", id, "reason", reason)
	}
	s.refreshRemote(ctx)
	what := "workflow " + targets[0] + " stops"
	if len(targets) > 1 {
		what = "workflows " + strings.Join(targets, ", ") + " stop"
	}
	s.writeJSON(w, http.StatusOK, map[string]any{
		"workflows": targets,
		"reason":    reason,
		"message":   "stop requested; " + what + " after the current iteration",
	})
}

// remotePage answers a page that shows this checkout's own runs with the
// line saying why it does not; the specs page lists the spec workflows.
func (s *Server) remotePage(w http.ResponseWriter, r *http.Request, active, title string) {
	p := s.base(r.Context(), r, active, title)
	var specs []RemoteRun
	if active == "specs" {
		for _, x := range p.Runs {
			if x.Kind == "spec" {
				specs = append(specs, x)
			}
		}
	}
	p.Runs, p.Data = specs, remoteNotes[active]
	s.render(w, http.StatusOK, "remote", "", p)
}

// watchRemote polls the remote's runs and wakes the event streams when
// what they show changes; it returns when ctx ends.
func (s *Server) watchRemote(ctx context.Context) {
	t := time.NewTicker(s.opt.RemotePoll)
	defer t.Stop()
	for {
		s.refreshRemote(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refreshRemote publishes the runs' live state when it changed.
func (s *Server) refreshRemote(ctx context.Context) {
	runs, err := s.runs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("ask the workflows", "err", err)
		}
		return
	}
	ls := liveState{Pending: len(pendingOf(runs))}
	for _, x := range runs {
		if x.Running {
			ls.Running = true
		}
	}
	if len(runs) > 0 {
		ls.TaskStatus, ls.Reason, ls.Workflow = runs[0].State, runs[0].Name, runs[0].ID
	}
	b, _ := json.Marshal(runs)
	s.mu.Lock()
	same := s.lastRuns == string(b)
	s.lastRuns = string(b)
	s.mu.Unlock()
	if !same {
		s.hub.publish(ls)
	}
}

// localPage is h, a page about this checkout's own runs; when the
// dashboard follows remote runs it is instead a page that says why it
// does not apply (and, for specs, lists the spec workflows).
func (s *Server) localPage(active, title string, h http.HandlerFunc) http.HandlerFunc {
	if s.opt.Remote == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) { s.remotePage(w, r, active, title) }
}

// localAPI is h, an API endpoint about this checkout's own runs; when the
// dashboard follows remote runs it answers 501 with the reason.
func (s *Server) localAPI(h http.HandlerFunc) http.HandlerFunc {
	if s.opt.Remote == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		s.jsonError(w, http.StatusNotImplemented, remoteNotes["api"])
	}
}

// runningRuns counts the runs still running.
func runningRuns(runs []RemoteRun) []RemoteRun {
	return slices.DeleteFunc(slices.Clone(runs), func(r RemoteRun) bool { return !r.Running })
}

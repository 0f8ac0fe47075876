package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
)

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.opt.Remote != nil {
		v, err := s.opt.Remote.Status(ctx)
		if err != nil {
			s.apiFail(w, err)
			return
		}
		s.writeJSON(w, http.StatusOK, v)
		return
	}
	st, err := s.store(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	if s.opt.Status == nil {
		d, err := s.overview(ctx)
		if err != nil {
			s.apiFail(w, err)
			return
		}
		s.writeJSON(w, http.StatusOK, d)
		return
	}
	v, err := s.opt.Status(ctx, s.ws, st)
	if errors.Is(err, store.ErrNoTask) {
		s.jsonError(w, http.StatusNotFound, err.Error())
		return
	}
	if err != nil {
		s.apiFail(w, err)
		return
	}
	s.writeJSON(w, http.StatusOK, v)
}

// eventsPage is the body of GET /api/events.
type eventsPage struct {
	Events []store.Event `json:"events"`
	// Next is the after= of the next page; absent on the last page.
	Next int64 `json:"next,omitempty"`
}

// apiEvents serves GET /api/events?after=ID&limit=N (oldest first, every
// task, or ?task=ID), the page for scripts that read the whole stream.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := r.URL.Query()
	var after, task int64
	limit := 100
	for name, dst := range map[string]*int64{"after": &after, "task": &task} {
		if x := v.Get(name); x != "" {
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil || n < 0 {
				s.jsonError(w, http.StatusBadRequest, "bad "+name+" "+strconv.Quote(x))
				return
			}
			*dst = n
		}
	}
	if x := v.Get("limit"); x != "" {
		n, err := strconv.Atoi(x)
		if err != nil || n <= 0 {
			s.jsonError(w, http.StatusBadRequest, "bad limit "+strconv.Quote(x))
			return
		}
		limit = min(n, 1000)
	}
	st, err := s.store(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	evs, err := st.EventsAfter(ctx, task, after, limit)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	out := eventsPage{Events: evs}
	if out.Events == nil {
		out.Events = []store.Event{}
	}
	if len(evs) == limit {
		out.Next = evs[len(evs)-1].ID
	}
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) apiPending(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.opt.Remote != nil {
		runs, err := s.runs(ctx)
		if err != nil {
			s.apiFail(w, err)
			return
		}
		s.writeJSON(w, http.StatusOK, pendingOf(runs))
		return
	}
	st, err := s.store(ctx)
	if errors.Is(err, errNoDatabase) {
		s.writeJSON(w, http.StatusOK, []store.HumanRequest{})
		return
	}
	if err != nil {
		s.apiFail(w, err)
		return
	}
	reqs, err := st.PendingHumanRequests(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	if reqs == nil {
		reqs = []store.HumanRequest{}
	}
	s.writeJSON(w, http.StatusOK, reqs)
}

// maxBody is the largest request body an action takes.
const maxBody = 64 << 10

// readBody decodes an optional JSON body into v: an empty body is fine;
// one over maxBody is an *http.MaxBytesError.
func readBody(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("the body is not the JSON expected: %w", err)
	}
	return nil
}

// bodyError answers a body readBody refused: 413 when it is too large,
// else 400.
func (s *Server) bodyError(w http.ResponseWriter, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		s.jsonError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d KiB", maxBody>>10))
		return
	}
	s.jsonError(w, http.StatusBadRequest, err.Error())
}

// answerResult is the body of a successful approve or reject.
type answerResult struct {
	Request store.HumanRequest `json:"request"`
	// PID is the run waiting on the answer; 0 when none is.
	PID     int    `json:"pid,omitempty"`
	Message string `json:"message"`
}

// apiAnswer serves POST /api/pending/{id}/approve and …/reject: the write
// ralph approve and ralph reject make.
func (s *Server) apiAnswer(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			s.jsonError(w, http.StatusNotFound, "no pending request "+strconv.Quote(r.PathValue("id")))
			return
		}
		var body struct {
			Response string `json:"response"`
			// Workflow names the remote run when several wait on id.
			Workflow string `json:"workflow"`
		}
		if err := readBody(w, r, &body); err != nil {
			s.bodyError(w, err)
			return
		}
		if s.opt.Remote != nil {
			s.answerRemote(w, r, body.Workflow, id, status, body.Response)
			return
		}
		st, err := s.store(ctx)
		if err != nil {
			s.apiFail(w, err)
			return
		}
		req, err := st.HumanRequestByID(ctx, id)
		if errors.Is(err, store.ErrNoHumanRequest) {
			s.jsonError(w, http.StatusNotFound, fmt.Sprintf("no pending request %d in this workspace", id))
			return
		}
		if err != nil {
			s.apiFail(w, err)
			return
		}
		if err := req.CheckAnswer(status, body.Response); err != nil {
			s.jsonError(w, http.StatusBadRequest, err.Error())
			return
		}
		done, err := st.ResolveHumanAs(ctx, id, status, body.Response, store.Answerer{Via: "dashboard"})
		var np *store.NotPendingError
		switch {
		case errors.Is(err, store.ErrNoHumanRequest):
			s.jsonError(w, http.StatusNotFound, fmt.Sprintf("no pending request %d in this workspace", id))
			return
		case errors.As(err, &np):
			s.jsonError(w, http.StatusConflict, np.Error())
			return
		case err != nil:
			s.apiFail(w, err)
			return
		}
		s.log.Info("answered", "request", id, "status", status)
		s.refresh(ctx)
		res := answerResult{Request: done, PID: s.ws.HolderPID()}
		res.Message = fmt.Sprintf("%s request %d", done.Status, done.ID)
		if res.PID != 0 {
			res.Message += fmt.Sprintf("; the run (pid %d) continues", res.PID)
		} else {
			res.Message += "; no run is waiting on it now: `ralph resume` continues the task with this answer"
		}
		s.writeJSON(w, http.StatusOK, res)
	}
}

// apiStop serves POST /api/stop: the write ralph stop makes.
func (s *Server) apiStop(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	body := struct {
		Reason string `json:"reason"`
		// Workflow names the remote run to stop; empty stops every one.
		Workflow string `json:"workflow"`
	}{}
	if err := readBody(w, r, &body); err != nil {
		s.bodyError(w, err)
		return
	}
	if strings.TrimSpace(body.Reason) == "" {
		body.Reason = "stopped from the dashboard"
	}
	if s.opt.Remote != nil {
		s.stopRemote(w, r, body.Workflow, body.Reason)
		return
	}
	pid := s.ws.HolderPID()
	if pid == 0 {
		s.jsonError(w, http.StatusConflict, "no ralph run is active in this workspace")
		return
	}
	st, err := s.store(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	if err := st.SetState(ctx, store.KeyStopRequest, body.Reason); err != nil {
		s.apiFail(w, err)
		return
	}
	s.log.Info("stop requested", "pid", pid, "reason", body.Reason)
	s.refresh(ctx)
	s.writeJSON(w, http.StatusOK, map[string]any{
		"pid":     pid,
		"reason":  body.Reason,
		"message": fmt.Sprintf("stop requested; ralph (pid %d) stops after its current iteration", pid),
	})
}

func (s *Server) apiSnapshots(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	repo, err := s.openSnapshots(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	ss, err := repo.List(ctx)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	if ss == nil {
		ss = []snapshot.Snapshot{}
	}
	s.writeJSON(w, http.StatusOK, ss)
}

// snapshotDiff is the body of GET /api/snapshots/{name}/diff, the same as
// ralph snapshot diff --json.
type snapshotDiff struct {
	Snapshot string                `json:"snapshot"`
	Changes  []snapshot.FileChange `json:"changes"`
}

func (s *Server) apiSnapshotDiff(w http.ResponseWriter, r *http.Request) {
	repo, snap, ok := s.snapshotFor(w, r, true)
	if !ok {
		return
	}
	changes, err := repo.Diff(r.Context(), snap.Name)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	if changes == nil {
		changes = []snapshot.FileChange{}
	}
	s.writeJSON(w, http.StatusOK, snapshotDiff{Snapshot: snap.Name, Changes: changes})
}

// rollbackResult is the body of a successful rollback.
type rollbackResult struct {
	Snapshot string `json:"snapshot"`
	Undo     string `json:"undo"`
	Message  string `json:"message"`
}

// apiRollback serves POST /api/snapshots/{name}/rollback: what ralph
// snapshot rollback does, refused (409) while a run holds the workspace.
func (s *Server) apiRollback(w http.ResponseWriter, r *http.Request) {
	repo, snap, ok := s.snapshotFor(w, r, true)
	if !ok {
		return
	}
	if pid := s.ws.HolderPID(); pid != 0 {
		s.writeJSON(w, http.StatusConflict, apiError{
			Error: fmt.Sprintf("a ralph run (pid %d) holds this workspace: stop it before rolling back", pid),
			PID:   pid,
		})
		return
	}
	undo, err := repo.Rollback(r.Context(), snap.Name)
	if err != nil {
		s.apiFail(w, err)
		return
	}
	s.log.Info("rolled back", "to", snap.Name, "undo", undo.Name)
	s.writeJSON(w, http.StatusOK, rollbackResult{
		Snapshot: snap.Name, Undo: undo.Name,
		Message: fmt.Sprintf("rolled back to %s; the previous state is saved as %s (roll back to it to undo)", snap.Name, undo.Name),
	})
}

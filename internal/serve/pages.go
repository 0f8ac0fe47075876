package serve

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/plancontext"
	"github.com/ralph-harness/ralph/internal/recipe"
	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// page is what every page's layout needs.
type page struct {
	Title  string
	Active string
	// Token is handed to the page's script for mutations, only when the
	// request itself carried the token.
	Token string
	// Act is true when the request came from someone who opened the
	// printed URL (the token or the read cookie): the page offers its
	// actions, which the script makes with the token it keeps.
	Act         bool
	NoDB        bool
	Running     bool
	PID         int
	Pending     []pendingView
	LastEventID int64
	Now         time.Time
	Data        any
	// Remote is true when the dashboard follows remote runs (Temporal
	// workflows); Runs are they, RemoteErr why they could not be read.
	Remote    bool
	Runs      []RemoteRun
	RemoteErr string
}

// pendingView is a pending request with what the page shows about it.
type pendingView struct {
	store.HumanRequest
	TaskNumber  int
	TaskMessage string
	// Workflow is the remote run that waits on the request.
	Workflow string
}

var navItems = []struct{ Path, Name, Label string }{
	{"/", "overview", "Overview"},
	{"/events", "events", "Events"},
	{"/approvals", "approvals", "Approvals"},
	{"/gates", "gates", "Gates"},
	{"/plan", "plan", "Plan"},
	{"/snapshots", "snapshots", "Snapshots"},
	{"/specs", "specs", "Specs"},
	{"/preview", "preview", "Preview"},
}

// Nav lists the navigation links.
func (p page) Nav() any { return navItems }

// base fills what every page shows: the run's state and the pending
// requests.
func (s *Server) base(ctx context.Context, r *http.Request, active, title string) page {
	p := page{Title: title, Active: active, Now: time.Now()}
	p.Act = authed(r)
	if carriedToken(r) {
		p.Token = s.opt.Token
	}
	if s.opt.Remote != nil {
		p.Remote = true
		runs, err := s.runs(ctx)
		if err != nil {
			p.RemoteErr = err.Error()
			return p
		}
		p.Runs = runs
		p.Running = len(runningRuns(runs)) > 0
		for _, x := range runs {
			if !x.Running {
				continue
			}
			for _, q := range x.Pending {
				p.Pending = append(p.Pending, pendingView{HumanRequest: q, TaskMessage: x.Name, Workflow: x.ID})
			}
		}
		return p
	}
	if pid := s.ws.HolderPID(); pid != 0 {
		p.Running, p.PID = true, pid
	}
	st, err := s.store(ctx)
	if err != nil {
		p.NoDB = true
		return p
	}
	if reqs, err := st.PendingHumanRequests(ctx); err == nil {
		for _, q := range reqs {
			v := pendingView{HumanRequest: q}
			if t, err := st.GetTask(ctx, q.TaskID); err == nil {
				v.TaskNumber, v.TaskMessage = t.Number, t.Message
			}
			p.Pending = append(p.Pending, v)
		}
	}
	if evs, err := st.EventsPage(ctx, store.EventQuery{Limit: 1}); err == nil && len(evs) > 0 {
		p.LastEventID = evs[0].ID
	}
	return p
}

// render executes a page (or, with block set, one of its templates) and
// writes it with secrets scrubbed.
func (s *Server) render(w http.ResponseWriter, code int, name, block string, p page) {
	t := s.pages[name]
	if block == "" {
		block = "layout"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, p); err != nil {
		s.log.Error("render", "page", name, "err", err)
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(s.scrub.Bytes(buf.Bytes()))
}

func (s *Server) htmlError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	p := page{Title: http.StatusText(code), Now: time.Now(), Data: struct {
		Code    int
		Message string
	}{code, msg}}
	s.render(w, code, "error", "", p)
}

// overviewData is the overview page's content.
type overviewData struct {
	HasTask    bool
	Task       store.Task
	Phase      string
	StatusFile string
	Iteration  int
	Elapsed    string
	ToolCalls  int
	// Tampers counts the agent's changes the harness undid or held.
	Tampers int
	// SandboxDenials counts the accesses the sandbox refused the agent.
	SandboxDenials int
	Iterations     []store.Iteration
	Bars           []bar
	ByCost         bool
	Steps          []store.StepRecord
	Gates          []store.GateResult
	Previous       []store.Task
	Tasks          int
	CostUSD        float64
	Tokens         int64
	Recent         []eventRow
	// Change is the task's change to the tree; HasChange is false when
	// it has no task-N-pre snapshot to measure it from.
	Change    taskChange
	HasChange bool
	// PreviousChanges are the previous tasks' changes, by task number.
	PreviousChanges map[int]taskChange
	// IterChanges are what each of the task's iterations changed, by
	// iteration number.
	IterChanges map[int]iterChange
}

func (s *Server) overview(ctx context.Context) (overviewData, error) {
	var d overviewData
	if s.opt.Remote != nil {
		return d, nil // the page lists the remote runs
	}
	st, err := s.store(ctx)
	if err != nil {
		return d, err
	}
	t, err := st.LatestTask(ctx)
	if errors.Is(err, store.ErrNoTask) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	d.HasTask, d.Task = true, t
	d.Phase, d.StatusFile, d.Iteration = s.ws.Phase(), s.ws.Status(), s.ws.Int(workspace.Iteration)
	end := t.EndedAt
	if end.IsZero() {
		end = time.Now()
	}
	d.Elapsed = end.Sub(t.StartedAt).Round(time.Second).String()
	if d.Iterations, err = st.Iterations(ctx, t.ID); err != nil {
		return d, err
	}
	for _, it := range d.Iterations {
		d.ToolCalls += it.ToolCalls
	}
	d.Bars, d.ByCost = chart(d.Iterations)
	if d.SandboxDenials, err = st.CountEvents(ctx, t.ID, store.KindSandbox); err != nil {
		return d, err
	}
	if d.Tampers, err = st.CountEvents(ctx, t.ID, store.KindTamper); err != nil {
		return d, err
	}
	if d.Steps, err = st.Steps(ctx, t.ID); err != nil {
		return d, err
	}
	gates, err := st.GateResults(ctx, t.ID)
	if err != nil {
		return d, err
	}
	if len(gates) > 0 {
		last := gates[len(gates)-1].Iteration
		for _, g := range gates {
			if g.Iteration == last {
				d.Gates = append(d.Gates, g)
			}
		}
	}
	all, err := st.Tasks(ctx)
	if err != nil {
		return d, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		x := all[i]
		d.Tasks++
		d.CostUSD += x.CostUSD
		d.Tokens += x.InputTokens + x.OutputTokens
		if x.ID != t.ID {
			d.Previous = append(d.Previous, x)
		}
	}
	d.Change, d.HasChange = s.taskChange(ctx, t.Number)
	d.IterChanges = s.iterationChanges(ctx, t.Number, d.Iterations)
	d.PreviousChanges = map[int]taskChange{}
	for _, x := range d.Previous[:min(len(d.Previous), 20)] {
		if c, ok := s.taskChange(ctx, x.Number); ok {
			d.PreviousChanges[x.Number] = c
		}
	}
	evs, err := st.EventsPage(ctx, store.EventQuery{TaskID: t.ID, Limit: 30})
	if err != nil {
		return d, err
	}
	for _, e := range evs {
		d.Recent = append(d.Recent, s.eventView(e))
	}
	return d, nil
}

func (s *Server) pageOverview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "overview", "Overview")
	d, err := s.overview(ctx)
	if err != nil && !errors.Is(err, errNoDatabase) {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	p.Data = d
	s.render(w, http.StatusOK, "overview", "", p)
}

// fragment serves the parts of pages the script refreshes on a change.
func (s *Server) fragment(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch r.PathValue("name") {
	case "pending":
		s.render(w, http.StatusOK, "overview", "pending", s.base(ctx, r, "", ""))
	case "overview":
		p := s.base(ctx, r, "overview", "")
		d, err := s.overview(ctx)
		if err != nil && !errors.Is(err, errNoDatabase) {
			s.htmlError(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		p.Data = d
		s.render(w, http.StatusOK, "overview", "overview-body", p)
	default:
		s.htmlError(w, r, http.StatusNotFound, "no such fragment")
	}
}

// eventsData is the events page's content.
type eventsData struct {
	Query  store.EventQuery
	All    bool
	Kinds  []string
	Events []eventRow
	// Older is the id to page back from; 0 when this is the last page.
	Older int64
	First bool
	// Task is the task shown, with its change to the tree.
	Task      store.Task
	Change    taskChange
	HasChange bool
	// IterChanges are what each of the task's iterations changed.
	IterChanges []iterChange
}

const pageSize = 200

// eventQuery reads the event filters from the URL.
func eventQuery(r *http.Request) (store.EventQuery, bool, error) {
	v := r.URL.Query()
	q := store.EventQuery{Kind: v.Get("kind"), Source: v.Get("source"), Search: v.Get("q"), Limit: pageSize}
	for name, dst := range map[string]*int64{"before": &q.Before, "task": &q.TaskID} {
		if x := v.Get(name); x != "" {
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil || n < 0 {
				return q, false, errors.New("bad " + name + " " + strconv.Quote(x))
			}
			*dst = n
		}
	}
	if x := v.Get("limit"); x != "" {
		n, err := strconv.Atoi(x)
		if err != nil || n <= 0 {
			return q, false, errors.New("bad limit " + strconv.Quote(x))
		}
		q.Limit = min(n, 1000)
	}
	return q, v.Get("all") == "1", nil
}

func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "events", "Events")
	q, all, err := eventQuery(r)
	if err != nil {
		s.htmlError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	d := eventsData{All: all, First: q.Before == 0}
	if st, err := s.store(ctx); err == nil {
		if !all && q.TaskID == 0 {
			if t, err := st.LatestTask(ctx); err == nil {
				q.TaskID = t.ID
			}
		}
		if q.TaskID != 0 {
			if t, err := st.GetTask(ctx, q.TaskID); err == nil {
				d.Task = t
				d.Change, d.HasChange = s.taskChange(ctx, t.Number)
				if its, err := st.Iterations(ctx, t.ID); err == nil {
					byN := s.iterationChanges(ctx, t.Number, its)
					for _, it := range its {
						if c, ok := byN[it.Number]; ok {
							d.IterChanges = append(d.IterChanges, c)
						}
					}
				}
			}
		}
		evs, err := st.EventsPage(ctx, q)
		if err != nil {
			s.htmlError(w, r, http.StatusInternalServerError, err.Error())
			return
		}
		for _, e := range evs {
			d.Events = append(d.Events, s.eventView(e))
		}
		if len(evs) == q.Limit {
			d.Older = evs[len(evs)-1].ID
		}
		d.Kinds, _ = st.EventKinds(ctx, q.TaskID, 5000)
		if q.Kind != "" && !slices.Contains(d.Kinds, q.Kind) {
			d.Kinds = append(d.Kinds, q.Kind)
		}
	}
	d.Query = q
	p.Data = d
	s.render(w, http.StatusOK, "events", "", p)
}

// gateAttempt is one completion attempt's gate verdicts.
type gateAttempt struct {
	Iteration int
	At        time.Time
	Results   []store.GateResult
	Failed    bool
}

func (s *Server) pageGates(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "gates", "Gates")
	var attempts []gateAttempt
	if st, err := s.store(ctx); err == nil {
		if t, err := st.LatestTask(ctx); err == nil {
			gates, err := st.GateResults(ctx, t.ID)
			if err != nil {
				s.htmlError(w, r, http.StatusInternalServerError, err.Error())
				return
			}
			for _, g := range gates {
				if len(attempts) == 0 || attempts[len(attempts)-1].Iteration != g.Iteration {
					attempts = append(attempts, gateAttempt{Iteration: g.Iteration, At: g.At})
				}
				a := &attempts[len(attempts)-1]
				a.Results = append(a.Results, g)
				if g.Status == "fail" {
					a.Failed = true
				}
			}
		}
	}
	slices.Reverse(attempts)
	p.Data = attempts
	s.render(w, http.StatusOK, "gates", "", p)
}

// planData is the plan page's content.
type planData struct {
	Source   string
	Root     *plan.Node
	Result   plan.Result
	Feedback string
}

func (s *Server) pagePlan(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "plan", "Plan")
	var d planData
	d.Source = s.ws.PlanContent()
	if strings.TrimSpace(d.Source) != "" {
		reg := plan.Registries{}
		if lib, err := recipe.Load(ctx, s.ws.Root); err == nil {
			reg = plancontext.Registries(lib)
		}
		d.Root, d.Result = plan.Check(plan.DefaultFile, []byte(d.Source), reg)
	}
	d.Feedback, _ = s.ws.Read(workspace.Feedback)
	p.Data = d
	s.render(w, http.StatusOK, "plan", "", p)
}

func (s *Server) pageApprovals(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "approvals", "Approvals")
	var history []store.HumanRequest
	if st, err := s.store(ctx); err == nil {
		if t, err := st.LatestTask(ctx); err == nil {
			history, _ = st.HumanRequests(ctx, t.ID)
			slices.Reverse(history)
		}
	}
	p.Data = history
	s.render(w, http.StatusOK, "approvals", "", p)
}

// openSnapshots opens the workspace's snapshot store.
func (s *Server) openSnapshots(ctx context.Context) (*snapshot.Repo, error) {
	return snapshot.Open(ctx, s.ws.Root, s.log)
}

func (s *Server) pageSnapshots(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "snapshots", "Snapshots")
	repo, err := s.openSnapshots(ctx)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	ss, err := repo.List(ctx)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	slices.Reverse(ss)
	p.Data = ss
	s.render(w, http.StatusOK, "snapshots", "", p)
}

// snapshotData is a snapshot's diff page.
type snapshotData struct {
	Snapshot snapshot.Snapshot
	Changes  []snapshot.FileChange
	Added    int
	Modified int
	Deleted  int
	Undo     string
	Holder   int
	// To is the snapshot compared with, "" for the working tree.
	To string
	// File and Lines are a file's text diff.
	File   string
	Lines  []diffLine
	Binary bool
}

// snapshotFor resolves the {name} of the URL; ok is false once it has
// answered 404.
func (s *Server) snapshotFor(w http.ResponseWriter, r *http.Request, api bool) (*snapshot.Repo, snapshot.Snapshot, bool) {
	ctx := r.Context()
	name := r.PathValue("name")
	repo, err := s.openSnapshots(ctx)
	if err != nil {
		s.fail(w, r, api, http.StatusInternalServerError, err.Error())
		return nil, snapshot.Snapshot{}, false
	}
	snap, err := repo.Resolve(ctx, name)
	if errors.Is(err, snapshot.ErrNoSuchSnapshot) {
		s.fail(w, r, api, http.StatusNotFound, "no snapshot named "+strconv.Quote(name)+" (see the snapshots page)")
		return nil, snapshot.Snapshot{}, false
	}
	if err != nil {
		s.fail(w, r, api, http.StatusInternalServerError, err.Error())
		return nil, snapshot.Snapshot{}, false
	}
	return repo, snap, true
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, api bool, code int, msg string) {
	if api {
		s.jsonError(w, code, msg)
		return
	}
	s.htmlError(w, r, code, msg)
}

// snapshotChanges resolves the {name} of the URL and returns the
// snapshot with what changed since it; ok is false once it has answered
// the request with an error page.
func (s *Server) snapshotChanges(w http.ResponseWriter, r *http.Request) (snapshotData, bool) {
	repo, snap, ok := s.snapshotFor(w, r, false)
	if !ok {
		return snapshotData{}, false
	}
	to, ok := s.compareTo(w, r, repo)
	if !ok {
		return snapshotData{}, false
	}
	changes, err := s.changesTo(r.Context(), repo, snap.Name, to)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return snapshotData{}, false
	}
	return snapshotData{Snapshot: snap, Changes: changes, To: to}, true
}

// compareTo reads the ?to= snapshot a diff view compares with ("" for
// the working tree); ok is false once it has answered 404.
func (s *Server) compareTo(w http.ResponseWriter, r *http.Request, repo *snapshot.Repo) (string, bool) {
	to := r.URL.Query().Get("to")
	if to == "" {
		return "", true
	}
	if _, err := repo.Resolve(r.Context(), to); err != nil {
		s.htmlError(w, r, http.StatusNotFound, "no snapshot named "+strconv.Quote(to)+" (see the snapshots page)")
		return "", false
	}
	return to, true
}

// changesTo returns what differs from snapshot name to snapshot to, or to
// the working tree when to is "".
func (s *Server) changesTo(ctx context.Context, repo *snapshot.Repo, name, to string) ([]snapshot.FileChange, error) {
	if to == "" {
		return repo.Diff(ctx, name)
	}
	return repo.DiffBetween(ctx, name, to)
}

func (s *Server) pageSnapshotDiff(w http.ResponseWriter, r *http.Request) {
	d, ok := s.snapshotChanges(w, r)
	if !ok {
		return
	}
	p := s.base(r.Context(), r, "snapshots", "Snapshot "+d.Snapshot.Name)
	for _, c := range d.Changes {
		switch c.Change {
		case snapshot.Added:
			d.Added++
		case snapshot.Deleted:
			d.Deleted++
		default:
			d.Modified++
		}
	}
	p.Data = d
	s.render(w, http.StatusOK, "snapshot", "", p)
}

// showable reports whether the file view may show path (slash-separated,
// relative to the workspace): never a path out of the tree, git's own
// files, ralph's private files or the access token's file wherever it
// lives; files that usually hold secrets (.env, keys) only to a request
// that carries the token.
func (s *Server) showable(r *http.Request, path string) bool {
	if path == "" || !fs.ValidPath(path) || path == "." || workspace.IsPrivate(path) {
		return false
	}
	for _, part := range strings.Split(path, "/") {
		if strings.EqualFold(part, ".git") {
			return false
		}
	}
	if s.opt.TokenFile != "" && sameFile(filepath.Join(s.ws.Root, filepath.FromSlash(path)), s.opt.TokenFile) {
		return false
	}
	return carriedToken(r) || !secrets.IsFile(path)
}

// sameFile reports whether a and b name the same file, through links.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	x, err1 := os.Stat(a)
	y, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(x, y)
}

func (s *Server) pageSnapshotFile(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	path := r.URL.Query().Get("path")
	if !s.showable(r, path) {
		s.htmlError(w, r, http.StatusNotFound, "no such file in the diff")
		return
	}
	repo, snap, ok := s.snapshotFor(w, r, false)
	if !ok {
		return
	}
	to, ok := s.compareTo(w, r, repo)
	if !ok {
		return
	}
	// Only a file the snapshot and the working tree (or the snapshot
	// compared with) differ in, as the snapshot store sees the tree (what
	// git ignores and ralph's private files are not part of it).
	changes, err := s.changesTo(ctx, repo, snap.Name, to)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	if !slices.ContainsFunc(changes, func(c snapshot.FileChange) bool { return c.Path == path }) {
		s.htmlError(w, r, http.StatusNotFound, "no such file in the diff")
		return
	}
	old, err := repo.ReadFile(ctx, snap.Name, path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		s.htmlError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	var cur []byte
	var err2 error
	if to == "" {
		cur, err2 = readWorkingFile(s.ws.Root, path)
	} else {
		cur, err2 = repo.ReadFile(ctx, to, path)
	}
	if err2 != nil && !errors.Is(err2, os.ErrNotExist) {
		s.htmlError(w, r, http.StatusBadRequest, err2.Error())
		return
	}
	if err != nil && err2 != nil {
		s.htmlError(w, r, http.StatusNotFound, "neither "+snap.Name+" nor the working tree holds "+path)
		return
	}
	p := s.base(ctx, r, "snapshots", path)
	d := snapshotData{Snapshot: snap, File: path, To: to}
	if isBinary(old) || isBinary(cur) {
		d.Binary = true
	} else {
		d.Lines = lineDiff(string(old), string(cur))
	}
	p.Data = d
	s.render(w, http.StatusOK, "file", "", p)
}

// readWorkingFile reads path (slash-separated, relative to root) from the
// working tree without following it out of root.
func readWorkingFile(root, path string) ([]byte, error) {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	return rt.ReadFile(path)
}

func isBinary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 }

func (s *Server) pageRollback(w http.ResponseWriter, r *http.Request) {
	d, ok := s.snapshotChanges(w, r)
	if !ok {
		return
	}
	p := s.base(r.Context(), r, "snapshots", "Roll back to "+d.Snapshot.Name)
	d.Undo, d.Holder = snapshot.Rollback(time.Now()), s.ws.HolderPID()
	p.Data = d
	s.render(w, http.StatusOK, "rollback", "", p)
}

package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ralph-harness/ralph/internal/workspace"
)

// SpecRow is one spec's line of ralph specs status; the JSON is the same.
type SpecRow struct {
	Spec         string  `json:"spec"`
	State        string  `json:"state"`
	PlanAttempt  int     `json:"plan_attempt"`
	ImplAttempts int     `json:"impl_attempts"`
	LastResult   string  `json:"last_result,omitempty"`
	CostUSD      float64 `json:"cost_usd"`
	// Worktree and Branch are where a parallel run runs the spec.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
}

// SpecsFunc returns what ralph specs status shows, for the specs page and
// GET /api/specs.
type SpecsFunc func(ctx context.Context) ([]SpecRow, error)

// specView is a spec row with its recent run logs.
type specView struct {
	SpecRow
	Runs []specRun
}

// specRun is one pipeline run's log folder.
type specRun struct {
	Name  string
	Files []string
}

// specRows returns the spec rows: from the Specs hook, or from the
// store's records when there is none.
func (s *Server) specRows(ctx context.Context) ([]SpecRow, error) {
	if s.opt.Specs != nil {
		return s.opt.Specs(ctx)
	}
	st, err := s.store(ctx)
	if errors.Is(err, errNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs, err := st.Specs(ctx)
	if err != nil {
		return nil, err
	}
	var rows []SpecRow
	for _, r := range recs {
		rows = append(rows, SpecRow{Spec: r.ID, State: r.State, PlanAttempt: r.PlanAttempt, ImplAttempts: r.ImplAttempts, LastResult: r.LastResult, CostUSD: r.CostUSD})
	}
	return rows, nil
}

// specRunsDir is where the spec pipeline keeps its run logs.
func (s *Server) specRunsDir() string {
	return filepath.Join(s.ws.Path(workspace.Logs), "specs", "runs")
}

// specRuns lists a spec's newest run log folders, newest first.
func (s *Server) specRuns(rel string) []specRun {
	id := strings.TrimSuffix(rel, ".md")
	if !validRel(id) {
		return nil
	}
	dir := filepath.Join(s.specRunsDir(), filepath.FromSlash(id))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var runs []specRun
	for i := len(entries) - 1; i >= 0 && len(runs) < 5; i-- {
		e := entries[i]
		if !e.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(dir, e.Name()))
		r := specRun{Name: e.Name()}
		for _, f := range files {
			if !f.IsDir() {
				r.Files = append(r.Files, f.Name())
			}
		}
		runs = append(runs, r)
	}
	return runs
}

// validRel reports whether p is a clean relative slash path.
func validRel(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !strings.HasPrefix(p, "../") && p != ".." && !path.IsAbs(p) && !strings.Contains(p, "\\")
}

func (s *Server) pageSpecs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "specs", "Specs")
	rows, err := s.specRows(ctx)
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	var views []specView
	for _, row := range rows {
		views = append(views, specView{SpecRow: row, Runs: s.specRuns(row.Spec)})
	}
	p.Data = views
	s.render(w, http.StatusOK, "specs", "", p)
}

func (s *Server) apiSpecs(w http.ResponseWriter, r *http.Request) {
	rows, err := s.specRows(r.Context())
	if err != nil {
		s.apiFail(w, err)
		return
	}
	if rows == nil {
		rows = []SpecRow{}
	}
	s.writeJSON(w, http.StatusOK, rows)
}

// maxLog is how much of a log's end the log page shows.
const maxLog = 256 << 10

// logData is the log page's content.
type logData struct {
	Spec, Run, File string
	Text            string
	Truncated       bool
}

// pageSpecLog shows the end of one spec run log:
// /specs/log?spec=ID&run=RUN&file=NAME.
func (s *Server) pageSpecLog(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	d := logData{Spec: v.Get("spec"), Run: v.Get("run"), File: v.Get("file")}
	id := strings.TrimSuffix(d.Spec, ".md")
	if !validRel(id) || !validRel(d.Run) || strings.Contains(d.Run, "/") || !validRel(d.File) || strings.Contains(d.File, "/") {
		s.htmlError(w, r, http.StatusNotFound, "no such log")
		return
	}
	root, err := os.OpenRoot(s.specRunsDir())
	if err != nil {
		s.htmlError(w, r, http.StatusNotFound, "no spec run logs in this workspace")
		return
	}
	defer root.Close()
	f, err := root.Open(path.Join(id, d.Run, d.File))
	if err != nil {
		s.htmlError(w, r, http.StatusNotFound, "no such log")
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxLog {
		_, _ = f.Seek(fi.Size()-maxLog, io.SeekStart)
		d.Truncated = true
	}
	b, err := io.ReadAll(io.LimitReader(f, maxLog))
	if err != nil {
		s.htmlError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	d.Text = string(b)
	p := s.base(r.Context(), r, "specs", d.File)
	p.Data = d
	s.render(w, http.StatusOK, "log", "", p)
}

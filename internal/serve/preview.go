package serve

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ralph-harness/ralph/internal/gate"
	"github.com/ralph-harness/ralph/internal/render"
	"github.com/ralph-harness/ralph/internal/store"
)

// preview serves the user's app live for the Preview page: bundled as
// the ui-renders gate bundles it, on a loopback port of its own (another
// origin, so the agent's code never runs with the dashboard's rights),
// rebuilt whenever the page asks for its version and the tree changed.
type preview struct {
	root string
	mu   sync.Mutex
	site *render.Site
	// version changes with what the app serves; err is why the last
	// build failed.
	version, err string
	// tree is the fingerprint of the working tree the build was made
	// from: the app is rebuilt only when it changes.
	tree string
	base string
	stop func()
}

// ServeHTTP serves the current build.
func (p *preview) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	site := p.site
	p.mu.Unlock()
	if site == nil {
		http.Error(w, "the app has not been built", http.StatusServiceUnavailable)
		return
	}
	site.ServeHTTP(w, r)
}

// refresh rebuilds the app and starts its server the first time; it
// returns the app's URL, its version and why it does not build.
func (p *preview) refresh(ctx context.Context) (base, version, why string) {
	tree := fingerprint(p.root)
	p.mu.Lock()
	same := tree == p.tree && (p.site != nil || p.err != "")
	p.mu.Unlock()
	if same {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.base, p.version, p.err
	}
	site, v, err := gate.AppSite(ctx, p.root, "")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tree = tree
	if err != nil {
		p.err = err.Error()
	} else {
		p.site, p.version, p.err = site, v, ""
	}
	if p.base == "" && p.site != nil {
		b, stop, err := render.Serve(context.WithoutCancel(ctx), p)
		if err != nil {
			return "", p.version, err.Error()
		}
		p.base, p.stop = b, stop
	}
	return p.base, p.version, p.err
}

// fingerprint sums up the names, sizes and modification times of the
// files under root that a build reads (not .git, .ralph, node_modules
// or dist), so that a change to any of them changes it.
func fingerprint(root string) string {
	h := fnv.New64a()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".ralph", "node_modules", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil {
			fmt.Fprintf(h, "%s\x00%d\x00%d\n", p, info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return fmt.Sprintf("%x", h.Sum64())
}

func (p *preview) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		p.stop()
		p.stop, p.base = nil, ""
	}
}

// previewData is the Preview page's content.
type previewData struct {
	// URL is the live app's; Error why it is not there.
	URL, Version, Error string
	Screens             []previewScreen
	// History is the screenshots of each completion attempt kept,
	// newest first.
	History []previewAttempt
	// Result is the latest ui-renders verdict, nil before one.
	Result *store.GateResult
}

// previewScreen is one screen's latest screenshots.
type previewScreen struct {
	Name  string
	Shots []string // file names under .ralph/preview
}

// previewAttempt is one completion attempt's screenshots.
type previewAttempt struct {
	Dir             string
	Task, Iteration int
	Shots           []string
}

// previewState is what /api/preview answers.
type previewState struct {
	URL     string `json:"url,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (s *Server) preview() *preview {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev == nil {
		s.prev = &preview{root: s.ws.Root}
	}
	return s.prev
}

func (s *Server) pagePreview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := s.base(ctx, r, "preview", "Preview")
	var d previewData
	d.URL, d.Version, d.Error = s.preview().refresh(ctx)
	dir := filepath.Join(s.ws.Root, filepath.FromSlash(gate.PreviewDir))
	d.Screens = previewScreens(dir)
	for _, h := range gate.HistoryDirs(filepath.Join(dir, "history")) {
		names, _ := filepath.Glob(filepath.Join(dir, "history", h.Name, "*.png"))
		a := previewAttempt{Dir: h.Name, Task: h.Task, Iteration: h.Iteration}
		for _, n := range names {
			a.Shots = append(a.Shots, filepath.Base(n))
		}
		d.History = append(d.History, a)
	}
	if st, err := s.store(ctx); err == nil {
		if t, err := st.LatestTask(ctx); err == nil {
			if results, err := st.GateResults(ctx, t.ID); err == nil {
				for i := len(results) - 1; i >= 0; i-- {
					if results[i].Gate == "ui-renders" {
						d.Result = &results[i]
						break
					}
				}
			}
		}
	}
	p.Data = d
	s.render(w, http.StatusOK, "preview", "", p)
}

// previewScreens groups the screenshots in dir by screen: home-desktop.png
// and home-phone.png are the two sizes of home.
func previewScreens(dir string) []previewScreen {
	names, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	var out []previewScreen
	for _, n := range names {
		base := filepath.Base(n)
		stem := strings.TrimSuffix(base, ".png")
		screen := stem
		for _, size := range []string{render.Desktop.Name, render.Phone.Name} {
			screen = strings.TrimSuffix(screen, "-"+size)
		}
		i := slices.IndexFunc(out, func(p previewScreen) bool { return p.Name == screen })
		if i < 0 {
			out = append(out, previewScreen{Name: screen})
			i = len(out) - 1
		}
		out[i].Shots = append(out[i].Shots, base)
	}
	return out
}

func (s *Server) apiPreview(w http.ResponseWriter, r *http.Request) {
	base, version, why := s.preview().refresh(r.Context())
	s.writeJSON(w, http.StatusOK, previewState{URL: base, Version: version, Error: why})
}

// previewShot serves one screenshot of .ralph/preview, or of an
// attempt under its history/.
func (s *Server) previewShot(w http.ResponseWriter, r *http.Request) {
	name, dir := r.PathValue("name"), r.PathValue("dir")
	if name != path.Base(name) || !strings.HasSuffix(name, ".png") || strings.HasPrefix(name, ".") ||
		(dir != "" && (dir != path.Base(dir) || !strings.HasPrefix(dir, "task-"))) {
		http.NotFound(w, r)
		return
	}
	if dir != "" {
		dir = filepath.Join("history", dir)
	}
	data, err := os.ReadFile(filepath.Join(s.ws.Root, filepath.FromSlash(gate.PreviewDir), dir, name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(data)
}

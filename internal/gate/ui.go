package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/plan"
	"github.com/ralph-harness/ralph/internal/render"
)

// PreviewDir is where ui-renders saves its screenshots, relative to the
// workspace root: <screen>-desktop.png and <screen>-phone.png.
const PreviewDir = ".ralph/preview"

// CoreTokens are the theme tokens ui-renders expects a page to use; one
// the stylesheet defines and no screen uses is a warning.
var CoreTokens = []string{"background", "foreground", "primary"}

// findingsMax bounds the findings the message lists per page.
const findingsMax = 8

// UIRenders is the ui-renders gate: after build-succeeds passes, it
// serves the bundle from memory on a loopback port (with the project's
// index.html and public files), loads each planned <Screen> in headless
// Chromium at desktop (1280×800) and phone (390×844) sizes, and fails
// with a fix when a page throws or logs an error (at its source
// file:line:col), renders nothing, lacks a planned section (found by
// data-section="<gumdrop>") or shows it with no size, has text below
// WCAG AA contrast, or is wider than a phone. Images without alt, unnamed
// buttons and unused theme tokens are warnings. The screenshots go to
// PreviewDir and the message names them, so the agent can look.
//
// It runs for App plans and for projects with [gates.ui]; without a
// browser it skips (fails when Required). One browser serves every check
// of a run: Close ends it.
type UIRenders struct {
	// OptIn runs the gate without an App plan ([gates.ui] exists).
	OptIn bool
	// Off turns the gate off.
	Off bool
	// Browser names the browser; "" finds one (render.Find).
	Browser string
	// Required fails the gate when there is no browser.
	Required bool
	// Build is the build-succeeds gate whose bundle is rendered; nil (or
	// a build without an in-process bundle) bundles the app here.
	Build *BuildSucceeds
	// Plan returns the current plan; nil reads .ralph/plan.tsx.
	Plan func() (*plan.Node, error)
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger

	// checking holds one check at a time: parallel specs share the gate,
	// and a check that restarts a dead browser must not end it under
	// another's page loads.
	checking sync.Mutex
	mu       sync.Mutex
	browser  *render.Browser
	starts   int // browsers started, for the tests
}

// Name returns "ui-renders".
func (*UIRenders) Name() string { return "ui-renders" }

// MayWriteTree reports false: the gate writes only ralph's private files
// (the screenshots under PreviewDir); the browser it drives loads the
// app's pages, which cannot write files.
func (*UIRenders) MayWriteTree(Env) bool { return false }

// ChecksWork reports whether the project opted in.
func (g *UIRenders) ChecksWork() bool { return g.OptIn && !g.Off }

// Close ends the browser, if one was started.
func (g *UIRenders) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.browser != nil {
		g.browser.Close()
		g.browser = nil
	}
	return nil
}

// screen is one page to load.
type screen struct {
	name, slug, path string
	sections         []string
}

// Check renders the app. Checks run one at a time.
func (g *UIRenders) Check(ctx context.Context, env Env) Result {
	g.checking.Lock()
	defer g.checking.Unlock()
	logger := g.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "gate", "gate", g.Name())
	if g.Off {
		return Result{Status: Skip, Message: "turned off in ralph.toml ([gates.ui] off = true)"}
	}
	p, _ := currentPlan(env.Root, g.Plan)
	app := p != nil && p.Component == "App"
	if !app && !g.OptIn {
		return Result{Status: Skip, Message: "not an App plan and no [gates.ui] in ralph.toml: nothing to render"}
	}
	if why := noPage(env.Root, g.entry()); why != "" {
		return Result{Status: Skip, Message: why}
	}
	// `npm run build` built the app: serve what it wrote to dist/, as
	// the real build made it (Tailwind and all), without source maps.
	dist := g.npmDist(env.Root)
	var (
		rep     = &Report{}
		entries []string
	)
	if dist == nil {
		var skip string
		if rep, entries, skip = g.bundle(ctx, env); skip != "" {
			return Result{Status: Skip, Message: skip}
		}
	}
	if pkgs := rep.MissingPackages(); len(pkgs) > 0 {
		return Result{Status: Skip, Message: fmt.Sprintf("%s not installed (%s): the app cannot run in a browser without them; install them so that ui-renders can render it",
			countNoun(len(pkgs), "package"), strings.Join(pkgs, ", "))}
	}
	exe, err := render.Find(g.Browser)
	if err != nil {
		msg := fmt.Sprintf("no browser to render the app in: %v; install Chromium (apt-get install chromium) or name one in ralph.toml: [gates.ui] browser = \"/path/to/chrome\" (`ralph doctor` says what it finds)", err)
		if g.Required {
			return Result{Status: Fail, Message: msg, Fix: "Install Chromium or Chrome, or set [gates.ui] browser in ralph.toml to one that exists. ([gates.ui] required = true makes this a failure.)"}
		}
		return Result{Status: Skip, Message: msg}
	}

	site := dist
	if site == nil {
		site, err = newSite(env.Root, entries, rep)
	}
	if err != nil {
		return Result{Status: Fail, Message: fmt.Sprintf("cannot serve the app: %v", err), Fix: "Check that index.html is readable."}
	}
	base, stop, err := render.Serve(ctx, site)
	if err != nil {
		return Result{Status: Fail, Message: err.Error()}
	}
	defer stop()
	site.base = base

	screens := planScreens(p)
	if err := resetPreview(env.Root); err != nil {
		logger.Warn("cannot clear the previews", "err", err)
	}
	var (
		failed, warned []string
		shots          []string
		defined, used  = map[string]bool{}, map[string]bool{}
	)
	start := time.Now()
	for _, sc := range screens {
		var fs, ws findings
		var screenShots []string
		sizes := []render.Viewport{render.Desktop, render.Phone}
		pages, err := g.loadAll(ctx, exe, base+sc.path, sizes, sc.sections, logger)
		if err != nil {
			if ctx.Err() != nil {
				return Result{Status: Fail, Message: fmt.Sprintf("interrupted while rendering: %v", ctx.Err())}
			}
			return Result{Status: Fail, Message: fmt.Sprintf("cannot render %s: %v", sc.name, err),
				Fix: "The browser could not load the page; check that the app does not hang on start-up (an endless loop or a blocking alert)."}
		}
		for i, vp := range sizes {
			pg := pages[i]
			shot := path.Join(PreviewDir, sc.slug+"-"+vp.Name+".png")
			if err := writeInside(env.Root, shot, pg.Screenshot); err != nil {
				logger.Warn("cannot save a screenshot", "file", shot, "err", err)
			} else {
				screenShots = append(screenShots, shot)
			}
			f, w := pageFindings(pg, vp, sc, site, env.Root)
			fs.add(vp.Name, f)
			ws.add(vp.Name, w)
			for _, t := range pg.Audit.TokensDefined {
				defined[t] = true
			}
			for _, t := range pg.Audit.TokensUsed {
				used[t] = true
			}
		}
		shots = append(shots, screenShots...)
		head := fmt.Sprintf("%s (%s) — screenshots %s:", sc.name, sc.path, strings.Join(screenShots, ", "))
		if len(fs.items) > 0 {
			failed = append(failed, head+"\n"+fs.String())
		}
		if len(ws.items) > 0 {
			warned = append(warned, head+"\n"+ws.String())
		}
	}
	logger.Debug("rendered", "screens", len(screens), "elapsed", time.Since(start))
	if err := keepHistory(env, shots); err != nil {
		logger.Warn("cannot keep the screenshots of this iteration", "err", err)
	}
	var unused []string
	for _, t := range CoreTokens {
		if defined[t] && !used[t] {
			unused = append(unused, "--"+t)
		}
	}
	if len(unused) > 0 {
		warned = append(warned, fmt.Sprintf("theme tokens defined but used on no screen: %s\n  fix: build with the theme's tokens (bg-background, text-foreground, bg-primary with text-primary-foreground, text-muted-foreground, border-border) instead of literal colours.", strings.Join(unused, ", ")))
	}
	look := "Look at the screenshots to see the page as the gate saw it: " + strings.Join(shots, ", ") + "."
	what := fmt.Sprintf("%s at desktop (1280×800) and phone (390×844)", countNoun(len(screens), "screen"))
	switch {
	case len(failed) > 0:
		msg := fmt.Sprintf("the app does not render right: %s\n\n%s\n", what, strings.Join(failed, "\n\n"))
		if len(warned) > 0 {
			msg += "\nWarnings:\n\n" + strings.Join(warned, "\n\n") + "\n"
		}
		return Result{Status: Fail, Message: msg + "\n" + look,
			Fix: "Fix each finding above as its fix line says, then mark the task complete again. " + look}
	case len(warned) > 0:
		return Result{Status: Warn, Message: fmt.Sprintf("%s render, with warnings:\n\n%s\n\n%s", what, strings.Join(warned, "\n\n"), look),
			Fix: "Fix the warnings above when you can; they do not block completion."}
	}
	return Result{Status: Pass, Message: fmt.Sprintf("%s render: no errors, every planned section shown, text readable, nothing wider than a phone; screenshots: %s", what, strings.Join(shots, ", "))}
}

// bundle returns the app's bundle: build-succeeds's, or one made here. A
// reason to skip is returned when the app did not build.
func (g *UIRenders) bundle(ctx context.Context, env Env) (*Report, []string, string) {
	if g.Build != nil {
		b := g.Build.lastBuild(env.Root)
		switch {
		case b == nil:
		case b.status == Fail:
			return nil, nil, "build-succeeds failed: there is nothing to render until the app builds"
		case b.status == Skip:
			return nil, nil, "build-succeeds did not build the app: there is nothing to render"
		case b.rep != nil && b.rep.Files != nil:
			return b.rep, b.entries, ""
		case b.rep != nil && len(b.rep.Missing) > 0:
			return b.rep, b.entries, ""
		}
	}
	entries, err := FindEntries(env.Root, g.entry())
	if err != nil {
		return nil, nil, fmt.Sprintf("no app to render: %v", err)
	}
	rep, err := Bundle(ctx, BundleOptions{Root: env.Root, Entries: entries, Tsconfig: tsconfigFor(env.Root), Outputs: true})
	if err != nil {
		return nil, nil, fmt.Sprintf("cannot bundle the app: %v", err)
	}
	if len(rep.Errors) > 0 {
		return nil, nil, "the app does not build: there is nothing to render until it does"
	}
	return rep, entries, ""
}

// npmDist returns dist/ as the site to load when build-succeeds ran
// `npm run build` and it passed and wrote dist/index.html; nil otherwise.
func (g *UIRenders) npmDist(root string) *site {
	if g.Build == nil || g.Build.Use != BuildNpm {
		return nil
	}
	b := g.Build.lastBuild(root)
	if b == nil || b.rep != nil || (b.status != Pass && b.status != Warn) {
		return nil
	}
	page, err := os.ReadFile(filepath.Join(root, "dist", "index.html"))
	if err != nil {
		return nil
	}
	return &site{Site: &render.Site{Files: map[string][]byte{}, Page: withBase(page), Dir: filepath.Join(root, "dist")}, maps: map[string]string{}}
}

// entry is the entry [gates.build] names, "" when none.
func (g *UIRenders) entry() string {
	if g.Build != nil {
		return g.Build.Entry
	}
	return ""
}

// noPage says why there is no page to load: no index.html and no entry
// script (src/main.tsx and the like) that renders the app, only an app
// component such as src/App.tsx, which nothing mounts. "" when there is
// a page.
func noPage(root, entry string) string {
	if entry != "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, "index.html")); err == nil {
		return ""
	}
	entries, err := FindEntries(root, "")
	if err != nil || len(entries) != 1 || !slices.Contains(DefaultEntries(), entries[0]) {
		return ""
	}
	return fmt.Sprintf("no page to load: no index.html and no src/main.tsx that mounts %s (a Vite app has both)", entries[0])
}

// AppSite bundles the app in root as ui-renders does and returns it to
// serve, with a version that changes whenever what it serves changes
// (the dashboard's Preview page reloads the app then). entry is the
// [gates.build] entry, "" to find it.
func AppSite(ctx context.Context, root, entry string) (*render.Site, string, error) {
	entries, err := FindEntries(root, entry)
	if err != nil {
		return nil, "", err
	}
	rep, err := Bundle(ctx, BundleOptions{Root: root, Entries: entries, Tsconfig: tsconfigFor(root), Outputs: true})
	if err != nil {
		return nil, "", err
	}
	if len(rep.Errors) > 0 {
		return nil, "", fmt.Errorf("the app does not build: %s", rep.Errors[0])
	}
	s, err := newSite(root, entries, rep)
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	h.Write(s.Page)
	names := slices.Sorted(maps.Keys(s.Files))
	for _, n := range names {
		h.Write([]byte(n))
		h.Write(s.Files[n])
	}
	return s.Site, hex.EncodeToString(h.Sum(nil))[:16], nil
}

// loadAll loads url at each size, in parallel, in the gate's browser:
// started the first time, and once more if it has died since.
func (g *UIRenders) loadAll(ctx context.Context, exe, url string, sizes []render.Viewport, sections []string, logger *slog.Logger) ([]*render.Page, error) {
	pages := make([]*render.Page, len(sizes))
	for attempt := 0; ; attempt++ {
		b, err := g.started(ctx, exe, logger)
		if err != nil {
			return nil, err
		}
		errs := make([]error, len(sizes))
		var wg sync.WaitGroup
		for i, vp := range sizes {
			if pages[i] != nil {
				continue
			}
			wg.Go(func() { pages[i], errs[i] = b.Load(ctx, url, vp, sections) })
		}
		wg.Wait()
		err = errors.Join(errs...)
		if err == nil || ctx.Err() != nil || attempt == 1 {
			return pages, err
		}
		// The browser may have died between checks: start a new one.
		logger.Debug("page load failed, restarting the browser", "err", err)
		g.Close()
	}
}

// started returns the gate's browser, starting it when there is none.
func (g *UIRenders) started(ctx context.Context, exe string, logger *slog.Logger) (*render.Browser, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.browser == nil {
		b, err := render.Start(ctx, exe, logger)
		if err != nil {
			return nil, err
		}
		g.browser = b
		g.starts++
	}
	return g.browser, nil
}

// planScreens returns the screens to load: each <Screen> of the plan at
// its path prop, else the first at / and the others at /<name>; without
// an App plan, the page at /.
func planScreens(p *plan.Node) []screen {
	var out []screen
	if p != nil && p.Component == "App" {
		for _, c := range p.Children {
			if c.Component != "Screen" {
				continue
			}
			sc := screen{name: c.Str("name"), slug: Slug(c.Str("name"))}
			sc.path = ScreenPath(c.Str("path"), c.Str("name"), len(out) == 0)
			c.Walk(func(n *plan.Node) bool {
				if n.Component == "Section" {
					if g := n.Str("gumdrop"); g != "" && !slices.Contains(sc.sections, g) {
						sc.sections = append(sc.sections, g)
					}
				}
				return true
			})
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		out = append(out, screen{name: "home", slug: "home", path: "/"})
	}
	// Two screens with one slug would overwrite each other's screenshots.
	seen := map[string]int{}
	for i := range out {
		if n := seen[out[i].slug]; n > 0 {
			out[i].slug = fmt.Sprintf("%s-%d", out[i].slug, n+1)
		}
		seen[out[i].slug]++
	}
	return out
}

// ScreenPath is the URL path ui-renders loads a screen at: its path prop,
// else / for the first screen and /<slug of its name> for the others.
func ScreenPath(prop, name string, first bool) string {
	switch {
	case prop != "":
		if !strings.HasPrefix(prop, "/") {
			prop = "/" + prop
		}
		return prop
	case first:
		return "/"
	}
	return "/" + Slug(name)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slug is a screen's name as a file and URL name: "Sign up" → "sign-up".
func Slug(name string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		return "screen"
	}
	return s
}

// HistoryKept is how many completion attempts' screenshots ui-renders
// keeps under PreviewDir/history/, for the dashboard's Preview page.
const HistoryKept = 10

// keepHistory copies this check's screenshots to
// PreviewDir/history/task-T-iteration-I/ and removes the oldest beyond
// HistoryKept; outside a run (no task or iteration) it keeps nothing.
// Every path resolves inside the workspace: a symbolic link the agent
// put in their place is refused, never followed.
func keepHistory(env Env, shots []string) error {
	if env.Task == 0 || env.Iteration == 0 || len(shots) == 0 {
		return nil
	}
	root, err := os.OpenRoot(env.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	hist := path.Join(PreviewDir, "history")
	dir := path.Join(hist, fmt.Sprintf("task-%d-iteration-%d", env.Task, env.Iteration))
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range shots {
		data, err := root.ReadFile(s)
		if err != nil {
			return err
		}
		if err := root.WriteFile(path.Join(dir, path.Base(s)), data, 0o644); err != nil {
			return err
		}
	}
	olds := HistoryDirs(filepath.Join(env.Root, filepath.FromSlash(hist)))
	for i := HistoryKept; i < len(olds); i++ {
		if err := root.RemoveAll(path.Join(hist, olds[i].Name)); err != nil {
			return err
		}
	}
	return nil
}

// writeInside writes data to name, a slash path relative to the
// workspace root, refusing a path that a symbolic link leads out of it.
func writeInside(root, name string, data []byte) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.WriteFile(name, data, 0o644)
}

// HistoryDir is one completion attempt's screenshots.
type HistoryDir struct {
	// Name is the directory's: task-T-iteration-I.
	Name            string
	Task, Iteration int
}

// HistoryDirs lists the attempts kept under hist, newest first.
func HistoryDirs(hist string) []HistoryDir {
	entries, _ := os.ReadDir(hist)
	var out []HistoryDir
	for _, e := range entries {
		var h HistoryDir
		if _, err := fmt.Sscanf(e.Name(), "task-%d-iteration-%d", &h.Task, &h.Iteration); err != nil || !e.IsDir() {
			continue
		}
		h.Name = e.Name()
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b HistoryDir) int {
		if a.Task != b.Task {
			return b.Task - a.Task
		}
		return b.Iteration - a.Iteration
	})
	return out
}

// resetPreview creates the workspace's preview directory and removes the
// screenshots of an earlier check, so that none is stale. A preview
// directory that is a symbolic link out of the workspace is refused:
// nothing outside it is created or removed.
func resetPreview(workspace string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(PreviewDir, 0o755); err != nil {
		return err
	}
	dir, err := root.Open(PreviewDir)
	if err != nil {
		return err
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".png") {
			continue
		}
		if err := root.Remove(path.Join(PreviewDir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// site is the app as the gate serves it, with the source maps of its
// scripts.
type site struct {
	*render.Site
	maps map[string]string // script URL path → its map's URL path
	base string            // the URL it is served at
}

// newSite serves the bundle: each entry's script at the entry's own
// path (the page's <script src="/src/main.tsx"> loads the bundle), its
// stylesheet linked into the page, which is the project's index.html or,
// without one, a page with a #root and #app element.
func newSite(root string, entries []string, rep *Report) (*site, error) {
	s := &site{Site: &render.Site{Files: map[string][]byte{}, Dir: root}, maps: map[string]string{}}
	for p, data := range rep.Files {
		s.Files[p] = data
	}
	var styles []string
	for _, e := range entries {
		stem := "/" + strings.TrimSuffix(e, path.Ext(e))
		if js, ok := rep.Files[stem+".js"]; ok {
			s.Files["/"+e] = js
			s.maps["/"+e] = stem + ".js.map"
			s.maps[stem+".js"] = stem + ".js.map"
		}
		if _, ok := rep.Files[stem+".css"]; ok {
			styles = append(styles, stem+".css")
		}
	}
	page, err := os.ReadFile(filepath.Join(root, "index.html"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		var b bytes.Buffer
		b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n</head>\n<body>\n<div id=\"root\"></div>\n<div id=\"app\"></div>\n")
		for _, e := range entries {
			fmt.Fprintf(&b, "<script type=\"module\" src=\"/%s\"></script>\n", e)
		}
		b.WriteString("</body>\n</html>\n")
		page = b.Bytes()
	case err != nil:
		return nil, err
	}
	s.Page = render.InjectStyles(withBase(page), styles)
	return s, nil
}

var baseTag = regexp.MustCompile(`(?i)<base\b`)
var headTag = regexp.MustCompile(`(?i)<head\b[^>]*>`)

// withBase adds <base href="/"> to a page that has none, so that its
// relative script and asset URLs load from the root on every screen's
// path, as Vite's base "/" serves them.
func withBase(page []byte) []byte {
	if baseTag.Match(page) {
		return page
	}
	if loc := headTag.FindIndex(page); loc != nil {
		return slices.Concat(page[:loc[1]], []byte(`<base href="/">`), page[loc[1]:])
	}
	return slices.Concat([]byte(`<base href="/">`), page)
}

// source maps a position in a served script (1-based) to the project
// file it came from: file:line:col, or "" when it cannot.
func (s *site) source(root, url string, line, col int) string {
	if line == 0 {
		return ""
	}
	p := url
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		}
	}
	p, _, _ = strings.Cut(p, "?")
	mp, ok := s.maps[p]
	if !ok {
		return ""
	}
	m, err := render.ParseSourceMap(s.Files[mp])
	if err != nil {
		return ""
	}
	src, sl, sc, ok := m.Lookup(line-1, col-1)
	if !ok {
		return ""
	}
	outdir := bundleOutdir()
	abs := filepath.Join(outdir, filepath.FromSlash(path.Dir(mp)), filepath.FromSlash(src))
	return fmt.Sprintf("%s:%d:%d", relSlash(root, abs), sl+1, sc+1)
}

// findings are one screen's findings, each with the sizes it was seen at.
type findings struct {
	items []string
	sizes map[string][]string
}

func (f *findings) add(size string, items []string) {
	if f.sizes == nil {
		f.sizes = map[string][]string{}
	}
	for _, it := range items {
		if _, ok := f.sizes[it]; !ok {
			f.items = append(f.items, it)
		}
		f.sizes[it] = append(f.sizes[it], size)
	}
}

// String lists the findings, each starting "- [desktop, phone] ".
func (f *findings) String() string {
	var b strings.Builder
	for i, it := range f.items {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "- [%s] %s", strings.Join(f.sizes[it], ", "), strings.TrimPrefix(it, "- "))
	}
	return b.String()
}

// pageFindings turns what one page showed into failures and warnings,
// each a line with a fix line under it.
func pageFindings(pg *render.Page, vp render.Viewport, sc screen, s *site, root string) (fails, warns []string) {
	add := func(list *[]string, what, fix string) {
		if len(*list) == findingsMax {
			*list = append(*list, "- … and more")
		}
		if len(*list) > findingsMax {
			return
		}
		*list = append(*list, "- "+what+"\n  fix: "+fix)
	}
	seen := map[string]bool{}
	for _, p := range pg.Problems {
		key := p.Kind + p.Message
		if seen[key] {
			continue
		}
		seen[key] = true
		at := s.source(root, p.URL, p.Line, p.Col)
		switch {
		case p.Kind == "exception":
			where := at
			if where == "" {
				where = "start-up"
			}
			add(&fails, fmt.Sprintf("uncaught exception at %s: %s", where, p.Message),
				fmt.Sprintf("Make the code at %s work when the page loads: it must not throw (guard the value that is missing, or catch and show the error in the page).", orStartup(at)))
		case p.Kind == "error":
			add(&fails, fmt.Sprintf("console error at %s: %s", orUnknown(at), p.Message),
				fmt.Sprintf("Fix what makes the code at %s log this error; the page must load without console errors.", orStartup(at)))
		case p.Kind == "dialog":
			add(&warns, p.Message, "Show messages in the page instead of alert, confirm or prompt: a dialog stops the page until someone answers it.")
		case p.URL != "" && s.base != "" && !strings.HasPrefix(p.URL, s.base+"/"):
			// Another host's file: the gate's machine may be offline.
			add(&warns, fmt.Sprintf("browser error (%s): %s (%s)", p.Kind, p.Message, p.URL),
				"The page loads this from another host, which did not answer here (the gate may run offline): bundle it with the app (npm package or a file in public/) so the page does not depend on the network.")
		default:
			what := fmt.Sprintf("browser error (%s): %s", p.Kind, p.Message)
			if p.URL != "" {
				what += " (" + pathOf(p.URL) + ")"
			}
			add(&fails, what, "Make every file the page loads exist: put it in public/ or import it from the code, or correct the reference.")
		}
	}
	a := pg.Audit
	if a.Blank {
		add(&fails, "the page is blank: the body shows no text and no image",
			"Make the entry render the app: src/main.tsx must render <App /> into the element index.html has (id=\"root\"), and App must return the screen's sections. An error at start-up (listed above, if any) also leaves the page blank.")
	}
	for _, sec := range a.Sections {
		switch {
		case !sec.Found:
			add(&fails, fmt.Sprintf("planned section %q is not on the page: no element has data-section=%q", sec.Name, sec.Name),
				fmt.Sprintf("Render the %s section on the %s screen and put data-section=%q on its root element (<section data-section=%q>…).", sec.Name, sc.name, sec.Name, sec.Name))
		case sec.Width < 1 || sec.Height < 1:
			add(&fails, fmt.Sprintf("planned section %q (%s) has an empty box: %.0f×%.0f px", sec.Name, sec.El, sec.Width, sec.Height),
				fmt.Sprintf("Give the %s section its content, and make sure it is not hidden (display: none, height: 0, or a parent that collapses it).", sec.Name))
		}
	}
	for _, c := range a.Contrast {
		size := "normal text"
		if c.Large {
			size = "large text"
		}
		add(&fails, fmt.Sprintf("text fails WCAG AA contrast: %s %q is %s on %s, %.2f:1 (%s needs %.1f:1)", c.El, c.Text, c.FG, c.BG, c.Ratio, size, c.Need),
			fmt.Sprintf("Use colours with at least %.1f:1 contrast: the theme's pairs are built for it (text-foreground on bg-background, text-primary-foreground on bg-primary, text-muted-foreground on bg-muted); do not set literal light greys on light backgrounds.", c.Need))
	}
	if vp.Mobile && a.Overflow.ScrollWidth > a.Overflow.Viewport+1 {
		var who []string
		for _, o := range a.Overflow.Offenders {
			who = append(who, fmt.Sprintf("%s (%dpx wide, right edge at %dpx)", o.El, o.Width, o.Right))
		}
		what := fmt.Sprintf("the page is %dpx wide on a %dpx phone: it scrolls sideways", a.Overflow.ScrollWidth, a.Overflow.Viewport)
		if len(who) > 0 {
			what += "; sticking out: " + strings.Join(who, ", ")
		}
		add(&fails, what, "Let wide content shrink at phone width: no fixed widths over 390px (use max-width: 100% / w-full), wrap rows (flex-wrap, a one-column grid below sm:), min-width: 0 on flex children, and overflow-x: auto around tables and code.")
	}
	if vp.Mobile && !a.ViewportMeta {
		add(&warns, "index.html has no <meta name=\"viewport\">: phones lay the page out 980px wide and shrink it",
			"Add <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"> to the <head> of index.html.")
	}
	if vp == render.Desktop {
		for _, i := range a.ImgNoAlt {
			add(&warns, fmt.Sprintf("image without alt: %s (%s)", i.El, i.Src), "Give every <img> an alt text that says what it shows (alt=\"\" for a decorative one).")
		}
		for _, b := range a.ButtonNoName {
			add(&warns, fmt.Sprintf("button without an accessible name: %s", b.El), "Give the button text, or an aria-label when it shows only an icon.")
		}
	}
	return fails, warns
}

func orStartup(at string) string {
	if at == "" {
		return "the app's start-up"
	}
	return at
}

func orUnknown(at string) string {
	if at == "" {
		return "an unknown place"
	}
	return at
}

// pathOf returns the path of a URL served by the gate.
func pathOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return rest[j:]
		}
	}
	return u
}

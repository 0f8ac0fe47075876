package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ralph-harness/ralph/internal/plan"
)

// Build tools the build-succeeds gate can use.
const (
	// BuildEsbuild bundles the app in-process with esbuild (Bundle).
	BuildEsbuild = "esbuild"
	// BuildNpm runs `npm run build` where package.json has a build
	// script and node_modules exists, and bundles with esbuild elsewhere.
	BuildNpm = "npm"
	// BuildOff turns the gate off.
	BuildOff = "off"
)

// What a bare import of a package that is not installed is.
const (
	// MissingWarn reports it as a warning (the default).
	MissingWarn = "warn"
	// MissingFail fails the gate.
	MissingFail = "fail"
	// MissingIgnore passes, saying so in the message.
	MissingIgnore = "ignore"
)

// DefaultBuildTimeout bounds `npm run build` unless configured.
const DefaultBuildTimeout = 5 * time.Minute

// buildErrorsMax bounds how many build errors the message lists.
const buildErrorsMax = 20

// BuildSucceeds is the build-succeeds gate (SPEC §9): the app compiles.
// It bundles the app's entry with esbuild (Bundle) — TypeScript, JSX,
// CSS and asset imports, tsconfig path aliases, packages in node_modules —
// and fails with every error as file:line:col: message and a fix. A bare
// import of a package that is not in node_modules is reported as not
// installed, a warning unless Missing says otherwise. Nothing is written
// into the project.
//
// The gate runs for App plans (.ralph/plan.tsx whose root is <App>) and
// for projects that opt in ([gates.build] in ralph.toml); elsewhere it
// skips without looking. Opted in, it checks the project's own work.
type BuildSucceeds struct {
	// OptIn runs the gate without an App plan ([gates.build] exists).
	OptIn bool
	// Use is BuildEsbuild (""), BuildNpm or BuildOff.
	Use string
	// Entry is the file to bundle, relative to the root (a script, or
	// an HTML page whose module scripts are bundled); "" finds it
	// (FindEntries).
	Entry string
	// Missing is MissingWarn (""), MissingFail or MissingIgnore.
	Missing string
	// Tsconfig forces one tsconfig file, relative to the root; "" uses
	// the nearest tsconfig.json of each file, or the tsconfig.app.json
	// (say) that a references-only tsconfig.json points to.
	Tsconfig string
	// Timeout bounds `npm run build`; 0 means DefaultBuildTimeout.
	Timeout time.Duration
	// Plan returns the current plan; nil reads .ralph/plan.tsx.
	Plan func() (*plan.Node, error)
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
	// KeepBundle keeps the last bundle in memory, for ui-renders.
	KeepBundle bool

	mu   sync.Mutex
	last *builtApp // what the last Check built
}

// builtApp is what a Check of build-succeeds left for ui-renders.
type builtApp struct {
	root    string
	status  Status
	entries []string
	rep     *Report // nil when the app was not bundled in-process
}

// lastBuild returns what the last Check in root built, nil when it has
// not run there.
func (g *BuildSucceeds) lastBuild(root string) *builtApp {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil || g.last.root != root {
		return nil
	}
	return g.last
}

// Name returns "build-succeeds".
func (*BuildSucceeds) Name() string { return "build-succeeds" }

// MayWriteTree reports whether the gate may run `npm run build` (Use is
// BuildNpm): package.json's build script, which the agent may have
// written, runs in the tree and may write anywhere in it. Bundled with
// esbuild, in ralph's process, the app is only read.
func (g *BuildSucceeds) MayWriteTree(Env) bool { return g.Use == BuildNpm }

// ChecksWork reports whether the project opted in: then the gate builds
// the app whatever the plan, as the project's own check.
func (g *BuildSucceeds) ChecksWork() bool { return g.OptIn && g.Use != BuildOff }

// Check builds the app.
func (g *BuildSucceeds) Check(ctx context.Context, env Env) Result {
	built := &builtApp{root: env.Root}
	r := g.check(ctx, env, built)
	built.status = r.Status
	g.mu.Lock()
	g.last = built
	g.mu.Unlock()
	return r
}

func (g *BuildSucceeds) check(ctx context.Context, env Env, built *builtApp) Result {
	logger := g.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "gate", "gate", g.Name())
	if g.Use == BuildOff {
		return Result{Status: Skip, Message: "turned off in ralph.toml ([gates.build] use = \"off\")"}
	}
	if !g.OptIn && !g.appPlan(env.Root) {
		return Result{Status: Skip, Message: "not an App plan and no [gates.build] in ralph.toml: nothing to build"}
	}
	note := ""
	if g.Use == BuildNpm {
		ok, why := npmBuildable(env.Root)
		if ok {
			return g.npm(ctx, env)
		}
		logger.Debug("npm build not possible, bundling with esbuild", "why", why)
		note = fmt.Sprintf("\n\n(`npm run build` was not run: %s; the app was bundled with esbuild instead.)", why)
	}
	entries, err := FindEntries(env.Root, g.Entry)
	if err != nil {
		var ee *EntryError
		if errors.As(err, &ee) {
			return Result{Status: Fail, Message: ee.Error(), Fix: ee.Fix}
		}
		return Result{Status: Fail, Message: fmt.Sprintf("cannot find the app's entry: %v", err)}
	}
	start := time.Now()
	tsconfig := g.Tsconfig
	if tsconfig == "" {
		tsconfig = tsconfigFor(env.Root)
	}
	rep, err := Bundle(ctx, BundleOptions{Root: env.Root, Entries: entries, Tsconfig: tsconfig, Outputs: g.KeepBundle})
	if err != nil {
		return Result{Status: Fail, Message: fmt.Sprintf("cannot bundle %s: %v", strings.Join(entries, ", "), err),
			Fix: "Check that the entry and tsconfig in [gates.build] name readable files."}
	}
	logger.Debug("bundled", "entries", entries, "tsconfig", tsconfig, "inputs", rep.Inputs, "errors", len(rep.Errors),
		"missing", len(rep.Missing), "elapsed", time.Since(start))
	built.entries, built.rep = entries, rep
	r := g.verdict(entries, rep)
	r.Message += note
	return r
}

// verdict turns a bundle report into the gate's result.
func (g *BuildSucceeds) verdict(entries []string, rep *Report) Result {
	what := strings.Join(entries, ", ")
	missingFails := g.Missing == MissingFail
	var b strings.Builder
	nerr := len(rep.Errors)
	if missingFails {
		nerr += len(rep.Missing)
	}
	if nerr > 0 {
		fmt.Fprintf(&b, "the app does not build: %s bundling %s\n", countNoun(nerr, "error"), what)
		shown := 0
		for _, e := range rep.Errors {
			if shown == buildErrorsMax {
				break
			}
			shown++
			fmt.Fprintf(&b, "\n%s\n  fix: %s\n", e, e.Fix)
		}
		if missingFails {
			for _, m := range rep.Missing {
				if shown == buildErrorsMax {
					break
				}
				shown++
				fmt.Fprintf(&b, "\n%s\n  fix: %s\n", m, m.Fix)
			}
		}
		if shown < nerr {
			fmt.Fprintf(&b, "\n… and %d more\n", nerr-shown)
		}
		if !missingFails && len(rep.Missing) > 0 && g.Missing != MissingIgnore {
			fmt.Fprintf(&b, "\nNot installed (their imports were not checked): %s\n", strings.Join(rep.MissingPackages(), ", "))
		}
		return Result{Status: Fail, Message: b.String(),
			Fix: "Fix each error at its file:line:col as its fix line says, then mark the task complete again. The gate bundles the app the way `vite build` would, so every error above would also break the real build."}
	}
	if len(rep.Missing) > 0 && g.Missing != MissingIgnore {
		fmt.Fprintf(&b, "%s %s not installed, so imports of them were not checked (%s builds otherwise):\n",
			countNoun(len(rep.MissingPackages()), "package"), isAre(len(rep.MissingPackages())), what)
		for i, m := range rep.Missing {
			if i == buildErrorsMax {
				fmt.Fprintf(&b, "… and %d more\n", len(rep.Missing)-i)
				break
			}
			fmt.Fprintf(&b, "%s\n", m)
		}
		return Result{Status: Warn, Message: b.String(),
			Fix: fmt.Sprintf("Declare them in package.json and install them (`npm install %s`), or stop importing them. Set [gates.build] missing = \"fail\" in ralph.toml to make this a failure.", strings.Join(rep.MissingPackages(), " "))}
	}
	msg := fmt.Sprintf("%s builds (%s)", what, countNoun(rep.Inputs, "file"))
	if n := len(rep.MissingPackages()); n > 0 {
		msg += fmt.Sprintf("; %s not installed and not checked: %s", countNoun(n, "package"), strings.Join(rep.MissingPackages(), ", "))
	}
	return Result{Status: Pass, Message: msg}
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// appPlan reports whether the workspace's plan is an App plan.
func (g *BuildSucceeds) appPlan(root string) bool {
	p, err := currentPlan(root, g.Plan)
	return err == nil && p != nil && p.Component == "App"
}

// npmBuildable reports whether `npm run build` can run in root: package.json
// has a build script and node_modules exists; otherwise it says why not.
func npmBuildable(root string) (bool, string) {
	data, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return false, "no package.json"
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return false, fmt.Sprintf("package.json: %v", err)
	}
	if strings.TrimSpace(pkg.Scripts["build"]) == "" {
		return false, "package.json has no build script"
	}
	if fi, err := os.Stat(filepath.Join(root, "node_modules")); err != nil || !fi.IsDir() {
		return false, "no node_modules"
	}
	return true, ""
}

// npm runs `npm run build` as a command gate.
func (g *BuildSucceeds) npm(ctx context.Context, env Env) Result {
	timeout := g.Timeout
	if timeout == 0 {
		timeout = DefaultBuildTimeout
	}
	c := &Command{GateName: g.Name(), Argv: []string{"npm", "run", "build"}, Timeout: timeout}
	return c.Check(ctx, env)
}

// EntryError says why no entry could be found, with a fix.
type EntryError struct {
	Msg string
	Fix string
}

func (e *EntryError) Error() string { return e.Msg }

// DefaultBuildEntries are the scripts FindEntries tries, in order, when
// there is no index.html: Vite's and Create React App's entries, then
// the app components DefaultEntries lists.
func DefaultBuildEntries() []string {
	return append([]string{
		"src/main.tsx", "src/main.jsx", "src/main.ts", "src/main.js",
		"src/index.tsx", "src/index.jsx", "src/index.ts", "src/index.js",
	}, DefaultEntries()...)
}

// FindEntries returns the scripts to bundle, relative to root and
// slash-separated: entry when set (the module scripts of an HTML page,
// or the file itself), else the module scripts of index.html, else the
// first of DefaultBuildEntries that exists. An *EntryError says what is
// missing.
func FindEntries(root, entry string) ([]string, error) {
	if entry != "" {
		entry = filepath.ToSlash(filepath.Clean(entry))
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(entry))); err != nil {
			return nil, &EntryError{Msg: fmt.Sprintf("the entry %s in [gates.build] does not exist", entry),
				Fix: fmt.Sprintf("Create %s, or correct [gates.build] entry in ralph.toml.", entry)}
		}
		if strings.HasSuffix(entry, ".html") {
			entries, err := htmlEntries(root, entry)
			if err == nil && len(entries) == 0 {
				return nil, &EntryError{Msg: fmt.Sprintf("%s has no <script type=\"module\" src=\"…\">", entry),
					Fix: fmt.Sprintf("Load the app from %s with <script type=\"module\" src=\"/src/main.tsx\"></script>, or set [gates.build] entry to the script.", entry)}
			}
			return entries, err
		}
		return []string{entry}, nil
	}
	if _, err := os.Stat(filepath.Join(root, "index.html")); err == nil {
		entries, err := htmlEntries(root, "index.html")
		if err != nil || len(entries) > 0 {
			return entries, err
		}
	}
	for _, e := range DefaultBuildEntries() {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(e))); err == nil && !fi.IsDir() {
			return []string{e}, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, &EntryError{
		Msg: fmt.Sprintf("there is no app to build: no index.html and none of %s", strings.Join(DefaultBuildEntries()[:4], ", ")+", …"),
		Fix: "Create src/main.tsx that renders <App /> from src/App.tsx (and src/App.tsx rendering the plan's sections), or name the entry in ralph.toml: [gates.build] entry = \"…\"."}
}

// moduleScript matches an HTML <script> start tag.
var scriptTag = regexp.MustCompile(`(?is)<script\b([^>]*)>`)

// attr matches one attribute of a tag.
var attr = regexp.MustCompile(`(?is)([a-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)

// htmlEntries returns the local module scripts of the HTML page at page
// (relative to root), relative to root: a src starting with / is relative
// to root (as Vite serves it), any other to the page's directory. A
// script that does not exist is an *EntryError at its line and column.
func htmlEntries(root, page string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range scriptTag.FindAllSubmatchIndex(data, -1) {
		attrs := map[string]string{}
		for _, a := range attr.FindAllSubmatch(data[m[2]:m[3]], -1) {
			attrs[strings.ToLower(string(a[1]))] = string(a[2]) + string(a[3]) + string(a[4])
		}
		src := attrs["src"]
		if !strings.EqualFold(attrs["type"], "module") || src == "" || strings.Contains(src, "://") || strings.HasPrefix(src, "//") {
			continue
		}
		src, _, _ = strings.Cut(src, "?")
		var rel string
		if strings.HasPrefix(src, "/") {
			rel = path.Clean(strings.TrimPrefix(src, "/"))
		} else {
			rel = path.Join(path.Dir(page), src)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			line, col := lineCol(data, m[0])
			return nil, &EntryError{
				Msg: fmt.Sprintf("%s:%d:%d: the module script %q does not exist (%s)", page, line, col, src, rel),
				Fix: fmt.Sprintf("Create %s (the app's entry: it renders <App /> into the page), or correct the src of the script in %s.", rel, page)}
		}
		out = append(out, rel)
	}
	return out, nil
}

// lineCol returns the 1-based line and byte column of offset off in src.
func lineCol(src []byte, off int) (int, int) {
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := off + 1
	if i := bytes.LastIndexByte(src[:off], '\n'); i >= 0 {
		col = off - i
	}
	return line, col
}

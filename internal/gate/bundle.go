package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
)

// BundleOptions says what Bundle bundles.
type BundleOptions struct {
	// Root is the project root; file names in the report are relative
	// to it.
	Root string
	// Entries are the scripts to bundle, relative to Root.
	Entries []string
	// Tsconfig forces one tsconfig file, relative to Root; "" uses the
	// nearest tsconfig.json of each file.
	Tsconfig string
	// Outputs keeps the bundle in the report (Files), with source maps,
	// for the ui-renders gate to serve.
	Outputs bool
}

// Report is what bundling found.
type Report struct {
	// Errors are the build errors, in esbuild's order.
	Errors []Diagnostic
	// Missing are the bare imports of packages that are not installed,
	// one per package and importing file. They were left out of the
	// bundle (external), so the rest of the app was still checked.
	Missing []Diagnostic
	// Inputs is how many files the bundle read.
	Inputs int
	// Files is the bundle when BundleOptions.Outputs asked for it and it
	// built: each file by its URL path, an entry's script and stylesheet
	// at its own path with .js and .css (src/main.tsx → /src/main.js),
	// assets under /assets/, source maps beside the scripts (.js.map).
	Files map[string][]byte
}

// MissingPackages returns the names of the packages that are not
// installed, sorted.
func (r *Report) MissingPackages() []string {
	var out []string
	for _, m := range r.Missing {
		if !slices.Contains(out, m.Package) {
			out = append(out, m.Package)
		}
	}
	slices.Sort(out)
	return out
}

// Diagnostic is one finding at a place in a file.
type Diagnostic struct {
	// File is relative to the root, slash-separated; Line and Col are
	// 1-based (Col in bytes); zero when unknown.
	File      string
	Line, Col int
	Message   string
	// Fix says what to do about it.
	Fix string
	// Package is the package that is not installed, for Missing.
	Package string
}

// String formats d as file:line:col: message.
func (d Diagnostic) String() string {
	switch {
	case d.File == "":
		return d.Message
	case d.Line == 0:
		return fmt.Sprintf("%s: %s", d.File, d.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Message)
}

// assetLoaders load what an app imports besides code and CSS: the
// import is the file's URL, as Vite makes it.
var assetLoaders = func() map[string]api.Loader {
	m := map[string]api.Loader{}
	for _, ext := range []string{
		".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif", ".ico", ".bmp", ".tif", ".tiff",
		".woff", ".woff2", ".ttf", ".otf", ".eot",
		".mp4", ".webm", ".ogg", ".mp3", ".wav", ".flac", ".aac", ".m4a",
		".pdf", ".txt", ".md", ".wasm", ".glb", ".gltf", ".hdr",
	} {
		m[ext] = api.LoaderFile
	}
	return m
}()

// resolving marks the plugin's own calls to Resolve, so it does not
// intercept them.
type resolving struct{}

// npmName matches a valid npm package name at the start of a bare import:
// name or @scope/name.
var npmName = regexp.MustCompile(`^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*`)

// Bundle bundles the entries the way Vite would (ES modules for the
// browser, TypeScript and JSX, CSS and assets, tsconfig paths, packages
// from node_modules) with esbuild, in memory: nothing is written. Errors
// and imports of packages that are not installed are in the report; the
// error is for a bundle that could not be attempted.
func Bundle(ctx context.Context, opt BundleOptions) (*Report, error) {
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	rep := &Report{}
	var mu sync.Mutex
	look := &lookups{inst: map[string]bool{}, res: map[string]*api.OnResolveResult{}}
	var missing []Diagnostic
	importers := map[string]map[string]bool{} // package → importing files
	plugin := api.Plugin{Name: "ralph", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `^[^.]`}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
			if _, ok := args.PluginData.(resolving); ok || args.Kind == api.ResolveEntryPoint || args.Namespace != "file" {
				return api.OnResolveResult{}, nil
			}
			if strings.HasPrefix(args.Path, "/") {
				return resolveRooted(root, b, args), nil
			}
			if strings.HasPrefix(args.Path, "//") || pluginModule(args.Path) {
				return api.OnResolveResult{Path: args.Path, External: true}, nil
			}
			pkg := npmName.FindString(args.Path)
			if pkg == "" || (len(pkg) < len(args.Path) && args.Path[len(pkg)] != '/') || look.installed(pkg, args.ResolveDir) {
				return api.OnResolveResult{}, nil // esbuild resolves it, or reports the error where it is
			}
			// Not in node_modules; a tsconfig path may still answer to it.
			if res, ok := look.resolve(b, args); ok {
				return res, nil
			}
			file := relSlash(root, args.Importer)
			mu.Lock()
			if importers[pkg] == nil {
				importers[pkg] = map[string]bool{}
			}
			if !importers[pkg][file] {
				importers[pkg][file] = true
				line, col := importPos(args.Importer, args.Path)
				missing = append(missing, Diagnostic{File: file, Line: line, Col: col, Package: pkg,
					Message: fmt.Sprintf("%q is not installed (no node_modules/%s)", pkg, pkg),
					Fix:     fmt.Sprintf("Install it (`npm install %s`) or stop importing it.", pkg)})
			}
			mu.Unlock()
			return api.OnResolveResult{Path: args.Path, External: true}, nil
		})
	}}
	entries := make([]string, len(opt.Entries))
	for i, e := range opt.Entries {
		entries[i] = filepath.Join(root, filepath.FromSlash(e))
	}
	tsconfig := ""
	if opt.Tsconfig != "" {
		tsconfig = filepath.Join(root, filepath.FromSlash(opt.Tsconfig))
	}
	outdir := bundleOutdir()
	bo := api.BuildOptions{
		EntryPoints:   entries,
		AbsWorkingDir: root,
		Bundle:        true,
		Write:         false,
		Outdir:        outdir,
		Format:        api.FormatESModule,
		Platform:      api.PlatformBrowser,
		Target:        api.ESNext,
		Loader:        assetLoaders,
		Tsconfig:      tsconfig,
		LogLevel:      api.LogLevelSilent,
		Metafile:      true,
		Plugins:       []api.Plugin{plugin},
	}
	if opt.Outputs {
		bo.Outbase = root
		bo.Sourcemap = api.SourceMapExternal
		bo.AssetNames = "assets/[name]-[hash]"
		bo.PublicPath = "/"
	}
	bctx, cerr := api.Context(bo)
	if cerr != nil {
		return nil, fmt.Errorf("bundle: %s", messagesText(cerr.Errors))
	}
	defer bctx.Dispose()
	stop := context.AfterFunc(ctx, bctx.Cancel)
	defer stop()
	res := bctx.Rebuild()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	for _, m := range res.Errors {
		rep.Errors = append(rep.Errors, diagnose(root, m))
	}
	rep.Inputs = countInputs(res.Metafile)
	if opt.Outputs && len(res.Errors) == 0 {
		rep.Files = map[string][]byte{}
		for _, f := range res.OutputFiles {
			if rel, err := filepath.Rel(outdir, f.Path); err == nil && filepath.IsLocal(rel) {
				rep.Files["/"+filepath.ToSlash(rel)] = f.Contents
			}
		}
	}
	rep.Missing = firstImports(missing, importers)
	return rep, nil
}

// bundleOutdir is the directory esbuild names its output under; nothing
// is written there.
func bundleOutdir() string { return filepath.Join(os.TempDir(), "ralph-build-succeeds") }

// firstImports keeps one diagnostic per missing package, the first by
// file and position (an import with a position before one without),
// noting how many other files import it; sorted by package.
func firstImports(all []Diagnostic, importers map[string]map[string]bool) []Diagnostic {
	slices.SortStableFunc(all, func(a, b Diagnostic) int {
		if c := strings.Compare(a.Package, b.Package); c != 0 {
			return c
		}
		if (a.Line == 0) != (b.Line == 0) {
			if a.Line == 0 {
				return 1
			}
			return -1
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	var out []Diagnostic
	for _, d := range all {
		if len(out) > 0 && out[len(out)-1].Package == d.Package {
			continue
		}
		if n := len(importers[d.Package]) - 1; n > 0 {
			d.Message = strings.TrimSuffix(d.Message, ")") + fmt.Sprintf("; also imported by %s)", countNoun(n, "other file"))
		}
		out = append(out, d)
	}
	return out
}

// scheme matches a URL scheme or a Vite virtual module's prefix.
var scheme = regexp.MustCompile(`^([a-z][a-z0-9+.-]*):`)

// pluginModule reports whether spec is something the browser or a Vite
// plugin provides rather than a file: a URL (https:), a virtual module
// (virtual:pwa-register) or an unplugin-icons icon (~icons/mdi/home).
// data: and node: imports are esbuild's to judge.
func pluginModule(spec string) bool {
	if strings.HasPrefix(spec, "~icons/") {
		return true
	}
	m := scheme.FindStringSubmatch(spec)
	return m != nil && m[1] != "data" && m[1] != "node" && m[1] != "file"
}

// resolveRooted resolves an import that starts with /: a file on disk
// when it exists, else (as Vite serves them) a module under the root or a
// public/ file (left as a URL). A CSS url() that matches nothing is left
// as a URL too; any other import esbuild reports.
func resolveRooted(root string, b api.PluginBuild, args api.OnResolveArgs) api.OnResolveResult {
	p, _, _ := strings.Cut(args.Path, "?")
	if _, err := os.Stat(p); err == nil {
		return api.OnResolveResult{}
	}
	res := b.Resolve("."+p, api.ResolveOptions{Importer: args.Importer, ResolveDir: root,
		Kind: args.Kind, Namespace: args.Namespace, PluginData: resolving{}, With: args.With})
	if len(res.Errors) == 0 {
		return api.OnResolveResult{Path: res.Path, External: res.External, Namespace: res.Namespace,
			Suffix: res.Suffix, SideEffects: sideEffects(res.SideEffects), PluginData: res.PluginData}
	}
	if _, err := os.Stat(filepath.Join(root, "public", filepath.FromSlash(p))); err == nil || args.Kind == api.ResolveCSSURLToken {
		return api.OnResolveResult{Path: args.Path, External: true}
	}
	return api.OnResolveResult{}
}

// lookups caches what the plugin looks up. esbuild's resolver is fast
// because it caches directories; a plugin's call to Resolve starts
// afresh, so the plugin calls it only for packages not installed, once
// per package and directory.
type lookups struct {
	mu   sync.Mutex
	inst map[string]bool                 // pkg NUL dir → installed
	res  map[string]*api.OnResolveResult // path NUL dir → resolved, or nil
}

// installed reports whether package pkg is in a node_modules directory
// of dir or one of its parents.
func (l *lookups) installed(pkg, dir string) bool {
	key := pkg + "\x00" + dir
	l.mu.Lock()
	v, ok := l.inst[key]
	l.mu.Unlock()
	if !ok {
		v = installed(pkg, dir)
		l.mu.Lock()
		l.inst[key] = v
		l.mu.Unlock()
	}
	return v
}

// resolve asks esbuild to resolve args as it would without the plugin.
func (l *lookups) resolve(b api.PluginBuild, args api.OnResolveArgs) (api.OnResolveResult, bool) {
	key := args.Path + "\x00" + args.ResolveDir
	l.mu.Lock()
	r, ok := l.res[key]
	l.mu.Unlock()
	if !ok {
		res := b.Resolve(args.Path, api.ResolveOptions{Importer: args.Importer, ResolveDir: args.ResolveDir,
			Kind: args.Kind, Namespace: args.Namespace, PluginData: resolving{}, With: args.With})
		if len(res.Errors) == 0 {
			r = &api.OnResolveResult{Path: res.Path, External: res.External, Namespace: res.Namespace,
				Suffix: res.Suffix, SideEffects: sideEffects(res.SideEffects), PluginData: res.PluginData}
		}
		l.mu.Lock()
		l.res[key] = r
		l.mu.Unlock()
	}
	if r == nil {
		return api.OnResolveResult{}, false
	}
	return *r, true
}

// installed reports whether package pkg is in a node_modules directory
// of dir or one of its parents.
func installed(pkg, dir string) bool {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); err == nil && fi.IsDir() {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// importPos finds where file imports spec: the position of the quoted
// specifier, or 0, 0.
func importPos(file, spec string) (int, int) {
	src, err := os.ReadFile(file)
	if err != nil {
		return 0, 0
	}
	for _, q := range []string{`"`, `'`, "`"} {
		if i := bytes.Index(src, []byte(q+spec+q)); i >= 0 {
			return lineCol(src, i)
		}
	}
	return 0, 0
}

// relSlash returns p relative to root, slash-separated; p itself when it
// is outside root.
func relSlash(root, p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// couldNotResolve and noMatchingExport match the esbuild errors the gate
// gives specific fixes for.
var (
	couldNotResolve  = regexp.MustCompile(`^Could not resolve "([^"]+)"`)
	noMatchingExport = regexp.MustCompile(`^No matching export in "([^"]+)" for import "([^"]+)"`)
)

// diagnose turns an esbuild error into a diagnostic with a fix.
func diagnose(root string, m api.Message) Diagnostic {
	d := Diagnostic{Message: m.Text}
	if loc := m.Location; loc != nil {
		d.File = relSlash(root, loc.File)
		d.Line, d.Col = loc.Line, loc.Column+1
	}
	for _, n := range m.Notes {
		if n.Text != "" && n.Location == nil && len(n.Text) < 300 && !strings.Contains(n.Text, "as external") {
			d.Message += " (" + strings.TrimSuffix(n.Text, ".") + ")"
			break
		}
	}
	at := d.String()
	if d.Line > 0 {
		at = fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Col)
	}
	switch {
	case m.Location == nil:
		d.Fix = "This error is not in a source file: check the build's settings ([gates.build] entry and tsconfig in ralph.toml) and the files they name."
	case couldNotResolve.MatchString(m.Text):
		spec := couldNotResolve.FindStringSubmatch(m.Text)[1]
		if strings.HasPrefix(spec, ".") && d.File != "" {
			target := path.Join(path.Dir(d.File), spec)
			d.Fix = fmt.Sprintf("%s does not exist: create it (as %s.tsx, or whichever extension fits), or change the import at %s to a file that exists.", target, target, at)
		} else {
			d.Fix = fmt.Sprintf("Nothing answers to %q: correct the import at %s (a path alias needs compilerOptions.paths in tsconfig.json; a package must be in package.json and node_modules).", spec, at)
		}
	case noMatchingExport.MatchString(m.Text):
		sm := noMatchingExport.FindStringSubmatch(m.Text)
		if strings.Contains(sm[1], "node_modules/") {
			d.Fix = fmt.Sprintf("The installed %s has no export named %s: change the import at %s to a name the package exports (check its version in package.json).", sm[1], sm[2], at)
			break
		}
		d.Fix = fmt.Sprintf("%s has no export named %s: export it there (`export function %s …`), or change the import at %s to what the file exports (for a default export: `import %s from …`).", sm[1], sm[2], sm[2], at, sm[2])
	default:
		d.Fix = fmt.Sprintf("Correct the code at %s; the line reads: %s", at, lineText(m))
	}
	return d
}

// lineText returns the source line of m, trimmed, or a placeholder.
func lineText(m api.Message) string {
	if m.Location == nil || strings.TrimSpace(m.Location.LineText) == "" {
		return "(no source line)"
	}
	t := strings.TrimSpace(m.Location.LineText)
	if len(t) > 160 {
		t = t[:160] + "…"
	}
	return "`" + t + "`"
}

// messagesText joins esbuild messages.
func messagesText(ms []api.Message) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.Text)
	}
	return strings.Join(parts, "; ")
}

// countInputs counts the inputs in an esbuild metafile.
func countInputs(metafile string) int {
	var mf struct {
		Inputs map[string]json.RawMessage `json:"inputs"`
	}
	if json.Unmarshal([]byte(metafile), &mf) != nil {
		return 0
	}
	return len(mf.Inputs)
}

// sideEffects converts a resolve result's side-effects flag.
func sideEffects(b bool) api.SideEffects {
	if b {
		return api.SideEffectsTrue
	}
	return api.SideEffectsFalse
}

package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// project copies testdata/build/base into a temp dir and lays each of
// overlays (more testdata/build directories) over it.
func project(t testing.TB, base string, overlays ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range append([]string{base}, overlays...) {
		copyTree(t, filepath.Join("testdata", "build", src), dir)
	}
	return dir
}

func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeDigest lists every file and directory under dir with its mode and
// the hash of its content, so a test can tell the tree did not change.
func treeDigest(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + fi.Mode().String() + " " + fi.ModTime().String())
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			b.WriteString(" " + hex.EncodeToString(sum[:]))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func check(t testing.TB, g *BuildSucceeds, dir string) Result {
	t.Helper()
	return g.Check(context.Background(), Env{Root: dir})
}

// TestBuildSucceedsViteApp: a Vite + React + TypeScript app (index.html,
// src/main.tsx, App.tsx, sections, CSS imports with an image, tsconfig
// path aliases, react from node_modules) builds, and the gate leaves the
// project byte for byte as it was.
func TestBuildSucceedsViteApp(t *testing.T) {
	dir := project(t, "vite-app")
	before := treeDigest(t, dir)
	r := check(t, &BuildSucceeds{OptIn: true}, dir)
	if r.Status != Pass {
		t.Fatalf("status = %s: %s", r.Status, r.Message)
	}
	// Every file of the app, the CSS, the image and the two node_modules
	// packages were read.
	if !strings.HasPrefix(r.Message, "src/main.tsx builds (12 files)") {
		t.Errorf("message = %q", r.Message)
	}
	if after := treeDigest(t, dir); after != before {
		t.Errorf("the gate changed the project:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestBuildSucceedsBroken: the three ways an agent breaks an app, each
// reported at its exact file:line:col with a fix, on a real project.
func TestBuildSucceedsBroken(t *testing.T) {
	tests := []struct {
		variant string
		want    string // the error line
		fix     string // part of its fix line
	}{
		{"syntax-error",
			"src/sections/FeaturesSection.tsx:16:28: Unterminated regular expression",
			"fix: Correct the code at src/sections/FeaturesSection.tsx:16:28; the line reads: `<h3>{f.title</h3>`"},
		{"missing-section",
			`src/App.tsx:3:32: Could not resolve "./sections/PricingSection"`,
			"fix: src/sections/PricingSection does not exist: create it (as src/sections/PricingSection.tsx"},
		{"missing-export",
			`src/App.tsx:3:10: No matching export in "src/sections/CtaSection.tsx" for import "CtaSection"`,
			"fix: src/sections/CtaSection.tsx has no export named CtaSection: export it there"},
		// react resolves to node_modules/react, whose exports are checked.
		{"package-export",
			`src/sections/FeaturesSection.tsx:1:20: No matching export in "node_modules/react/index.js" for import "useTransition"`,
			"fix: The installed node_modules/react/index.js has no export named useTransition"},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			dir := project(t, "vite-app", tt.variant)
			before := treeDigest(t, dir)
			r := check(t, &BuildSucceeds{OptIn: true}, dir)
			if r.Status != Fail {
				t.Fatalf("status = %s: %s", r.Status, r.Message)
			}
			lines := strings.Split(r.Message, "\n")
			if lines[0] != "the app does not build: 1 error bundling src/main.tsx" {
				t.Errorf("first line = %q", lines[0])
			}
			i := slicesIndex(lines, tt.want)
			if i < 0 {
				t.Fatalf("no line %q in:\n%s", tt.want, r.Message)
			}
			if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), tt.fix) {
				t.Errorf("fix line after %q is not %q:\n%s", tt.want, tt.fix, r.Message)
			}
			if !strings.Contains(r.Fix, "file:line:col") {
				t.Errorf("fix = %q", r.Fix)
			}
			if after := treeDigest(t, dir); after != before {
				t.Errorf("the gate changed the project")
			}
		})
	}
}

func slicesIndex(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}

// TestBuildSucceedsTsconfigPaths: #ui/Button resolves only through the
// tsconfig's paths; without them it is an error at the import.
func TestBuildSucceedsTsconfigPaths(t *testing.T) {
	dir := project(t, "vite-app")
	if err := os.Remove(filepath.Join(dir, "tsconfig.json")); err != nil {
		t.Fatal(err)
	}
	r := check(t, &BuildSucceeds{OptIn: true}, dir)
	if r.Status != Fail || !strings.Contains(r.Message, `src/sections/HeroSection.tsx:2:24: Could not resolve "#ui/Button"`) {
		t.Errorf("without tsconfig paths: %s\n%s", r.Status, r.Message)
	}
	// Tsconfig names another file, as for Vite's tsconfig.app.json.
	os.WriteFile(filepath.Join(dir, "tsconfig.app.json"), []byte(`{"compilerOptions": {"jsx": "react-jsx", "paths": {"@/*": ["./src/*"], "#ui/*": ["./src/ui/*"]}}}`), 0o644)
	if r := check(t, &BuildSucceeds{OptIn: true, Tsconfig: "tsconfig.app.json"}, dir); r.Status != Pass {
		t.Errorf("with tsconfig = tsconfig.app.json: %s\n%s", r.Status, r.Message)
	}
}

// TestBuildSucceedsNotInstalled: bare imports of packages that are not in
// node_modules are reported as not installed, each at its first import,
// as a warning by default, a failure or nothing as configured.
func TestBuildSucceedsNotInstalled(t *testing.T) {
	dir := project(t, "not-installed")
	want := []string{
		`src/App.tsx:1:24: "framer-motion" is not installed (no node_modules/framer-motion)`,
		`src/App.tsx:2:24: "lucide-react" is not installed (no node_modules/lucide-react; also imported by 1 other file)`,
		`src/main.tsx:1:28: "react-dom" is not installed (no node_modules/react-dom)`,
	}
	r := check(t, &BuildSucceeds{OptIn: true}, dir)
	if r.Status != Warn {
		t.Fatalf("status = %s: %s", r.Status, r.Message)
	}
	for _, w := range want {
		if !strings.Contains(r.Message, w+"\n") {
			t.Errorf("missing %q in:\n%s", w, r.Message)
		}
	}
	if !strings.Contains(r.Fix, "npm install framer-motion lucide-react react-dom") {
		t.Errorf("fix = %q", r.Fix)
	}

	r = check(t, &BuildSucceeds{OptIn: true, Missing: MissingFail}, dir)
	if r.Status != Fail || !strings.HasPrefix(r.Message, "the app does not build: 3 errors") || !strings.Contains(r.Message, want[0]+"\n  fix: Install it (`npm install framer-motion`)") {
		t.Errorf("missing = fail: %s\n%s", r.Status, r.Message)
	}
	r = check(t, &BuildSucceeds{OptIn: true, Missing: MissingIgnore}, dir)
	if r.Status != Pass || !strings.Contains(r.Message, "3 packages not installed and not checked: framer-motion, lucide-react, react-dom") {
		t.Errorf("missing = ignore: %s\n%s", r.Status, r.Message)
	}

	// A broken import next to missing packages still fails: the missing
	// ones are left out, and the rest of the app is checked.
	os.WriteFile(filepath.Join(dir, "src/sections/HeroSection.tsx"), []byte("import { Ship } from 'lucide-react'\nimport { Wave } from './Wave'\n\nexport const HeroSection = () => <Wave><Ship /></Wave>\n"), 0o644)
	r = check(t, &BuildSucceeds{OptIn: true}, dir)
	if r.Status != Fail || !strings.Contains(r.Message, `src/sections/HeroSection.tsx:2:22: Could not resolve "./Wave"`) ||
		!strings.Contains(r.Message, "Not installed (their imports were not checked): framer-motion, lucide-react, react-dom") {
		t.Errorf("broken import and missing packages: %s\n%s", r.Status, r.Message)
	}
}

// TestBuildSucceedsWhenItRuns: the gate builds App plans and projects
// that opted in, and leaves everything else alone.
func TestBuildSucceedsWhenItRuns(t *testing.T) {
	dir := project(t, "vite-app", "missing-section")
	if r := check(t, &BuildSucceeds{}, dir); r.Status != Skip || !strings.Contains(r.Message, "nothing to build") {
		t.Errorf("no plan, no opt-in: %s %s", r.Status, r.Message)
	}
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	os.WriteFile(filepath.Join(dir, ".ralph", "plan.tsx"), []byte(themelessPlan), 0o644)
	if r := check(t, &BuildSucceeds{}, dir); r.Status != Skip || !strings.Contains(r.Message, "not an App plan") {
		t.Errorf("orchestration plan, no opt-in: %s %s", r.Status, r.Message)
	}
	os.WriteFile(filepath.Join(dir, ".ralph", "plan.tsx"), []byte("<App name=\"Tideline\">\n  <Screen name=\"home\">\n    <Section gumdrop=\"hero\" />\n  </Screen>\n</App>\n"), 0o644)
	if r := check(t, &BuildSucceeds{}, dir); r.Status != Fail {
		t.Errorf("App plan: %s %s", r.Status, r.Message)
	}
	if r := check(t, &BuildSucceeds{Use: BuildOff}, dir); r.Status != Skip {
		t.Errorf("use = off: %s %s", r.Status, r.Message)
	}
}

func TestFindEntries(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		entry string
		want  string // the entries, comma-separated, or the error
	}{
		{"index.html", map[string]string{"index.html": "<body>\n<script type=\"module\" src=\"/src/main.tsx\"></script>", "src/main.tsx": "", "src/App.tsx": ""}, "", "src/main.tsx"},
		{"relative src and two scripts", map[string]string{"web/index.html": "<script src=\"legacy.js\"></script><script type='module' src='./app.ts?v=2'></script><script type=module src=boot.js></script>", "web/app.ts": "", "web/boot.js": ""}, "web/index.html", "web/app.ts,web/boot.js"},
		{"html script missing", map[string]string{"index.html": "<body>\n  <div id=\"root\"></div>\n    <script type=\"module\" src=\"/src/main.tsx\"></script>"}, "", `index.html:3:5: the module script "/src/main.tsx" does not exist (src/main.tsx)`},
		{"html without module script", map[string]string{"index.html": "<h1>hi</h1>", "src/index.tsx": ""}, "", "src/index.tsx"},
		{"main before App", map[string]string{"src/main.jsx": "", "src/App.tsx": ""}, "", "src/main.jsx"},
		{"App alone", map[string]string{"src/App.tsx": ""}, "", "src/App.tsx"},
		{"configured", map[string]string{"client/entry.tsx": "", "src/main.tsx": ""}, "client/entry.tsx", "client/entry.tsx"},
		{"configured missing", map[string]string{"src/main.tsx": ""}, "client/entry.tsx", "the entry client/entry.tsx in [gates.build] does not exist"},
		{"nothing", map[string]string{"README.md": ""}, "", "there is no app to build: no index.html and none of src/main.tsx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
			}
			got, err := FindEntries(dir, tt.entry)
			s := strings.Join(got, ",")
			if err != nil {
				s = err.Error()
			}
			if !strings.HasPrefix(s, tt.want) {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

// fakeNpm puts an npm on PATH that runs the shell script body.
func fakeNpm(t *testing.T, body string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestBuildSucceedsNpm: use = "npm" runs `npm run build` (argv, in the
// root) where package.json has a build script and node_modules exists,
// fails with the tail of its output, and bounds it with the timeout;
// elsewhere it bundles with esbuild.
func TestBuildSucceedsNpm(t *testing.T) {
	fakeNpm(t, "echo \"$@\" > npm-args.txt\necho 'src/App.tsx(3,32): error TS2307: Cannot find module'\nexit 2\n")
	dir := project(t, "vite-app")
	r := check(t, &BuildSucceeds{OptIn: true, Use: BuildNpm}, dir)
	args, _ := os.ReadFile(filepath.Join(dir, "npm-args.txt"))
	if string(args) != "run build\n" {
		t.Errorf("npm got %q", args)
	}
	if r.Status != Fail || !strings.Contains(r.Message, "`npm run build` exited with status 2") || !strings.Contains(r.Message, "error TS2307: Cannot find module") {
		t.Errorf("npm build failing: %s\n%s", r.Status, r.Message)
	}

	// No node_modules: esbuild instead, and npm is not run.
	dir = project(t, "not-installed")
	if r := check(t, &BuildSucceeds{OptIn: true, Use: BuildNpm}, dir); r.Status != Warn ||
		!strings.HasSuffix(r.Message, "(`npm run build` was not run: no node_modules; the app was bundled with esbuild instead.)") {
		t.Errorf("without node_modules: %s %s", r.Status, r.Message)
	}
	if _, err := os.Stat(filepath.Join(dir, "npm-args.txt")); err == nil {
		t.Error("npm ran without node_modules")
	}

	fakeNpm(t, "exec sleep 30\n")
	dir = project(t, "vite-app")
	r = check(t, &BuildSucceeds{OptIn: true, Use: BuildNpm, Timeout: 300 * time.Millisecond}, dir)
	if r.Status != Fail || !strings.Contains(r.Message, "did not finish within 300ms") {
		t.Errorf("npm build hanging: %s\n%s", r.Status, r.Message)
	}
}

// TestBuildSucceedsAliasLikePackage: a tsconfig path that looks like a
// package name is an alias, not a package that is not installed: it is
// resolved and checked.
func TestBuildSucceedsAliasLikePackage(t *testing.T) {
	dir := project(t, "not-installed")
	os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(`{"compilerOptions": {"paths": {"harbour-ui/*": ["./src/ui/*"]}}}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "src/ui"), 0o755)
	os.WriteFile(filepath.Join(dir, "src/ui/Buoy.tsx"), []byte("export const Buoy = () => <span>buoy</span>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src/sections/HeroSection.tsx"), []byte("import { Buoy } from 'harbour-ui/Buoy'\n\nexport const HeroSection = () => <Buoy />\n"), 0o644)
	r := check(t, &BuildSucceeds{OptIn: true}, dir)
	if r.Status != Warn || strings.Contains(r.Message, "harbour-ui") {
		t.Errorf("alias: %s\n%s", r.Status, r.Message)
	}
	os.WriteFile(filepath.Join(dir, "src/sections/HeroSection.tsx"), []byte("import { Anchor } from 'harbour-ui/Buoy'\n\nexport const HeroSection = () => <Anchor />\n"), 0o644)
	r = check(t, &BuildSucceeds{OptIn: true}, dir)
	if r.Status != Fail || !strings.Contains(r.Message, `src/sections/HeroSection.tsx:1:10: No matching export in "src/ui/Buoy.tsx" for import "Anchor"`) {
		t.Errorf("alias, wrong name: %s\n%s", r.Status, r.Message)
	}
}

// TestBundleCancelled: a cancelled context ends the bundle with its error.
func TestBundleCancelled(t *testing.T) {
	dir := project(t, "vite-app")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Bundle(ctx, BundleOptions{Root: dir, Entries: []string{"src/main.tsx"}}); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("err = %v", err)
	}
}

// TestBuildSucceedsBadTsconfig: a tsconfig in [gates.build] that does not
// exist fails the gate, pointing at the settings.
func TestBuildSucceedsBadTsconfig(t *testing.T) {
	dir := project(t, "vite-app")
	r := check(t, &BuildSucceeds{OptIn: true, Tsconfig: "tsconfig.app.json"}, dir)
	if r.Status != Fail || !strings.Contains(r.Message, "Cannot find tsconfig file \"tsconfig.app.json\"\n  fix: This error is not in a source file: check the build's settings ([gates.build]") {
		t.Errorf("%s\n%s", r.Status, r.Message)
	}
}

// TestBuildSucceedsRootedImports: imports starting with / resolve as Vite
// serves them: from the project root, or as URLs of public/ files; a CSS
// url() that matches no file stays a URL; a script that matches nothing
// is an error.
func TestBuildSucceedsRootedImports(t *testing.T) {
	dir := project(t, "vite-app")
	os.WriteFile(filepath.Join(dir, "src/Logo.tsx"), []byte("import favicon from '/favicon.svg'\nimport { Button } from '/src/ui/Button'\n\nexport const Logo = () => <Button href=\"/\"><img src={favicon} /></Button>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src/logo.css"), []byte(".logo { background: url('/images/served-elsewhere.png'); }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src/main.tsx"), []byte("import './logo.css'\nimport { Logo } from './Logo'\n\nconsole.log(<Logo />)\n"), 0o644)
	if r := check(t, &BuildSucceeds{OptIn: true}, dir); r.Status != Pass {
		t.Fatalf("%s\n%s", r.Status, r.Message)
	}
	os.WriteFile(filepath.Join(dir, "src/Logo.tsx"), []byte("import { Button } from '/src/ui/Buttons'\n\nexport const Logo = () => <Button href=\"/\">logo</Button>\n"), 0o644)
	if r := check(t, &BuildSucceeds{OptIn: true}, dir); r.Status != Fail || !strings.Contains(r.Message, `src/Logo.tsx:1:24: Could not resolve "/src/ui/Buttons"`) {
		t.Errorf("%s\n%s", r.Status, r.Message)
	}
}

// TestBuildSucceedsViteImports: what Vite and its plugins provide builds:
// ?raw and ?url imports, virtual modules, unplugin-icons, URLs.
func TestBuildSucceedsViteImports(t *testing.T) {
	dir := project(t, "vite-app")
	os.WriteFile(filepath.Join(dir, "src/main.tsx"), []byte("import raw from './index.css?raw'\nimport url from './assets/wave.png?url'\n"+
		"import { registerSW } from 'virtual:pwa-register'\nimport Home from '~icons/mdi/home'\nimport confetti from 'https://esm.sh/canvas-confetti@1'\n\n"+
		"console.log(raw, url, registerSW, Home, confetti)\n"), 0o644)
	if r := check(t, &BuildSucceeds{OptIn: true}, dir); r.Status != Pass {
		t.Errorf("%s\n%s", r.Status, r.Message)
	}
}

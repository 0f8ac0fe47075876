package gate

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-harness/ralph/internal/render"
)

// The ui-renders tests drive the real Chromium: without one they skip,
// except under CI, where scripts/install-chromium.sh has installed it.
func needBrowser(t *testing.T) {
	t.Helper()
	if _, err := render.Find(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

const uiPlan = `<App name="Tideline">
  <Theme mood="minimal" />
  <Screen name="home">
    <Section gumdrop="hero" />
    <Section gumdrop="features" />
  </Screen>
</App>
`

// uiApp is a small app without dependencies that passes ui-renders;
// each case of TestUIRenders changes one file of it.
var uiApp = map[string]string{
	".ralph/plan.tsx": uiPlan,
	"index.html": `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Tideline</title></head>
  <body><div id="root"></div><script type="module" src="/src/main.ts"></script></body>
</html>
`,
	"src/index.css": "body { margin: 0; font-family: sans-serif; color: #111; background: #fff; }\n.lead { color: #555; }\nsection { padding: 24px; }\n",
	"src/main.ts": `import './index.css'
import { render } from './app'

render(document.getElementById('root')!)
`,
	"src/app.ts": `export function render(root: HTMLElement) {
  root.innerHTML = ` + "`" + `
    <section data-section="hero"><h1>Tideline</h1><p class="lead">Tide tables for every harbour</p></section>
    <section data-section="features"><ul><li>Offline tables</li><li>Harbour alerts</li></ul></section>` + "`" + `
}
`,
}

func writeApp(t *testing.T, change map[string]string) string {
	t.Helper()
	return writeAppTB(t, change)
}

// writeAppTB writes uiApp with change applied (an empty body removes a
// file) into a new directory.
func writeAppTB(t testing.TB, change map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for name, body := range uiApp {
		files[name] = body
	}
	for name, body := range change {
		files[name] = body
	}
	for name, body := range files {
		if body == "" {
			continue // the change removes the file
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUIRenders(t *testing.T) {
	needBrowser(t)
	build := &BuildSucceeds{KeepBundle: true}
	g := &UIRenders{Build: build}
	t.Cleanup(func() { g.Close() })
	appTS := uiApp["src/app.ts"]
	for _, tc := range []struct {
		name   string
		change map[string]string
		status Status
		want   []string
	}{
		{"passes", nil, Pass, []string{"1 screen at desktop (1280×800) and phone (390×844) render", ".ralph/preview/home-desktop.png"}},
		{"no page: an App component nothing mounts", map[string]string{"index.html": "", "src/main.ts": "", "src/App.tsx": "export default function App() { return null }\n"}, Skip,
			[]string{"no page to load: no index.html and no src/main.tsx that mounts src/App.tsx"}},
		{"blank page", map[string]string{"src/app.ts": "export function render(root: HTMLElement) {}\n"}, Fail,
			[]string{"the page is blank", `planned section "hero" is not on the page`}},
		{"throws at start-up", map[string]string{"src/app.ts": "export function render(root: HTMLElement) {\n  const user: any = undefined\n  root.textContent = user.name\n}\n"}, Fail,
			[]string{"uncaught exception at src/app.ts:3:", "TypeError: Cannot read properties of undefined (reading 'name')"}},
		{"missing section", map[string]string{"src/app.ts": strings.Replace(appTS, `data-section="features"`, `class="features"`, 1)}, Fail,
			[]string{`planned section "features" is not on the page: no element has data-section="features"`, `put data-section="features" on its root element`}},
		{"grey on white", map[string]string{"src/index.css": strings.Replace(uiApp["src/index.css"], "#555", "#cccccc", 1)}, Fail,
			[]string{`text fails WCAG AA contrast: [data-section="hero"] p.lead "Tide tables for every harbour"`, "#cccccc on #ffffff, 1.6"}},
		{"warnings only", map[string]string{
			"src/index.css": ":root { --background: #ffffff; --foreground: #111111; --primary: #0050aa; }\nbody { margin: 0; background: var(--background); color: var(--foreground); }\n",
			"src/app.ts":    strings.Replace(appTS, "</ul>", "</ul><img src=\"data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=\" width=\"20\" height=\"20\"><button class=\"icon\"><svg width=\"16\" height=\"16\"></svg></button>", 1)}, Warn,
			[]string{"theme tokens defined but used on no screen: --primary", "[desktop] image without alt: [data-section=\"features\"] img", "[desktop] button without an accessible name: [data-section=\"features\"] button.icon"}},
		{"a missing file fails, another host's only warns", map[string]string{"index.html": strings.Replace(uiApp["index.html"], "<title>",
			`<link rel="stylesheet" href="http://offline.invalid/font.css"><script src="/missing.js"></script><title>`, 1)}, Fail,
			[]string{"browser error (network): Failed to load resource: the server responded with a status of 404 (Not Found) (/missing.js)",
				"Warnings:", "(http://offline.invalid/font.css)", "the gate may run offline"}},
		{"an alert at start-up is answered, and warned of", map[string]string{"src/main.ts": "alert('Welcome aboard')\n" + uiApp["src/main.ts"]}, Warn,
			[]string{`[desktop, phone] the page called alert(): "Welcome aboard"`, "Show messages in the page instead of alert"}},
		{"phone overflow", map[string]string{"src/index.css": uiApp["src/index.css"] + "ul { width: 640px; }\n"}, Fail,
			[]string{"the page is ", "px wide on a 390px phone", "ul"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeApp(t, tc.change)
			env := Env{Root: dir}
			if tc.status == Skip {
				if r := g.Check(context.Background(), env); r.Status != Skip || !strings.Contains(r.Message, tc.want[0]) {
					t.Fatalf("ui-renders: %s %s, want skip: %s", r.Status, r.Message, tc.want[0])
				}
				return
			}
			if r := build.Check(context.Background(), env); r.Status != Pass {
				t.Fatalf("build-succeeds: %s %s", r.Status, r.Message)
			}
			r := g.Check(context.Background(), env)
			t.Logf("%s\n%s\nfix: %s", r.Status, r.Message, r.Fix)
			if r.Status != tc.status {
				t.Errorf("status %s, want %s", r.Status, tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Message, w) {
					t.Errorf("message lacks %q", w)
				}
			}
			for _, size := range []string{"desktop", "phone"} {
				data, err := os.ReadFile(filepath.Join(dir, ".ralph", "preview", "home-"+size+".png"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := png.Decode(bytes.NewReader(data)); err != nil {
					t.Fatalf("%s screenshot: %v", size, err)
				}
			}
		})
	}
	// One browser served every check, as it serves every iteration of a run.
	if g.starts != 1 {
		t.Errorf("the gate started %d browsers across its checks, want 1", g.starts)
	}
}

// Without a browser the gate skips with one line naming [gates.ui]
// browser and ralph doctor; required = true makes it a failure.
func TestUIRendersNoBrowser(t *testing.T) {
	dir := writeApp(t, nil)
	for _, required := range []bool{false, true} {
		g := &UIRenders{Browser: filepath.Join(dir, "no-such-chrome"), Required: required}
		r := g.Check(context.Background(), Env{Root: dir})
		want := Skip
		if required {
			want = Fail
		}
		if r.Status != want || !strings.Contains(r.Message, `no browser to render the app in: browser "`) ||
			!strings.Contains(r.Message, `[gates.ui] browser = "/path/to/chrome" (`+"`ralph doctor`"+` says what it finds)`) {
			t.Errorf("required=%v: %s %s", required, r.Status, r.Message)
		}
		if strings.Contains(r.Message, "\n") {
			t.Errorf("required=%v: the message is more than one line: %q", required, r.Message)
		}
	}
	// Off, and not an App plan: skips that say why.
	if r := (&UIRenders{Off: true}).Check(context.Background(), Env{Root: dir}); r.Status != Skip || !strings.Contains(r.Message, "[gates.ui] off = true") {
		t.Errorf("off: %s %s", r.Status, r.Message)
	}
	if err := os.Remove(filepath.Join(dir, ".ralph", "plan.tsx")); err != nil {
		t.Fatal(err)
	}
	if r := (&UIRenders{}).Check(context.Background(), Env{Root: dir}); r.Status != Skip || !strings.Contains(r.Message, "not an App plan and no [gates.ui]") {
		t.Errorf("no plan: %s %s", r.Status, r.Message)
	}
}

// With [gates.build] use = "npm", the page `npm run build` wrote to dist/
// is what ui-renders loads: the real build, whatever it used.
func TestUIRendersNpmDist(t *testing.T) {
	needBrowser(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm")
	}
	dir := writeApp(t, map[string]string{
		"package.json": `{"name": "tideline", "private": true, "scripts": {"build": "mkdir -p dist && cp built.html dist/index.html"}}`,
		"built.html": `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><section data-section="hero"><h1>Built by npm</h1><p style="color: #d0d0d0">pale</p></section><section data-section="features">Features</section></body></html>`,
		"node_modules/.keep": "x",
	})
	build := &BuildSucceeds{Use: BuildNpm, KeepBundle: true}
	g := &UIRenders{Build: build}
	t.Cleanup(func() { g.Close() })
	env := Env{Root: dir}
	if r := build.Check(context.Background(), env); r.Status != Pass {
		t.Fatalf("build-succeeds: %s %s", r.Status, r.Message)
	}
	r := g.Check(context.Background(), env)
	if r.Status != Fail || !strings.Contains(r.Message, `[data-section="hero"] p "pale" is #d0d0d0 on #ffffff`) {
		t.Fatalf("ui-renders did not load dist/: %s\n%s", r.Status, r.Message)
	}
}

// Each completion attempt's screenshots are kept for the Preview page,
// the newest HistoryKept of them; outside a run none are.
func TestUIRendersHistory(t *testing.T) {
	dir := t.TempDir()
	shots := []string{PreviewDir + "/home-desktop.png", PreviewDir + "/home-phone.png"}
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(PreviewDir)), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range shots {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(s)), []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hist := filepath.Join(dir, filepath.FromSlash(PreviewDir), "history")
	if err := keepHistory(Env{Root: dir}, shots); err != nil || len(HistoryDirs(hist)) != 0 {
		t.Fatalf("outside a run: %v, %v", err, HistoryDirs(hist))
	}
	for i := 1; i <= HistoryKept+2; i++ {
		if err := keepHistory(Env{Root: dir, Task: 1, Iteration: i}, shots); err != nil {
			t.Fatal(err)
		}
	}
	if err := keepHistory(Env{Root: dir, Task: 2, Iteration: 1}, shots); err != nil {
		t.Fatal(err)
	}
	got := HistoryDirs(hist)
	if len(got) != HistoryKept || got[0].Name != "task-2-iteration-1" || got[1].Name != "task-1-iteration-12" || got[len(got)-1].Name != "task-1-iteration-4" {
		t.Fatalf("kept %v", got)
	}
	if _, err := os.Stat(filepath.Join(hist, "task-2-iteration-1", "home-phone.png")); err != nil {
		t.Error(err)
	}
}

// The agent can make .ralph/preview or its history a symbolic link to a
// directory of the user's: ui-renders then removes and writes nothing
// there (the old screenshots outside stay, no history lands outside).
func TestUIRendersPreviewLinkOutsideRefused(t *testing.T) {
	for _, link := range []string{PreviewDir, PreviewDir + "/history"} {
		t.Run(path.Base(link), func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			photo := filepath.Join(outside, "holiday.png")
			if err := os.WriteFile(photo, []byte("the user's"), 0o644); err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(dir, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, at); err != nil {
				t.Fatal(err)
			}
			resetErr := resetPreview(dir)
			shot := PreviewDir + "/home-desktop.png"
			writeErr := writeInside(dir, shot, []byte("png"))
			var histErr error
			for i := 1; i <= HistoryKept+1; i++ {
				if err := keepHistory(Env{Root: dir, Task: 1, Iteration: i}, []string{shot}); err != nil {
					histErr = err
				}
			}
			if link == PreviewDir && (resetErr == nil || writeErr == nil) {
				t.Errorf("through a linked preview dir: reset %v, write %v", resetErr, writeErr)
			}
			if link != PreviewDir && histErr == nil {
				t.Error("history through a link out of the workspace was kept")
			}
			if b, err := os.ReadFile(photo); err != nil || string(b) != "the user's" {
				t.Errorf("the user's file: %q, %v", b, err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Errorf("outside holds %d entries, want the user's file alone", len(entries))
			}
		})
	}
}

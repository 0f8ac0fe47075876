package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ralph-harness/ralph/internal/store"
)

// TestBrowserPreviewShowsTheApp: the Preview page shows the user's app,
// live, in a frame (served from another loopback port, so the agent's
// code never runs with the dashboard's rights), the latest screenshots
// and the ui-renders findings; a change to a source file shows in the
// frame without the page reloading.
func TestBrowserPreviewShowsTheApp(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	root := f.ws.Root
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head><body><div id="root"></div><script type="module" src="/src/main.ts"></script></body></html>`)
	write("src/main.ts", "document.getElementById('root')!.innerHTML = '<h1>Tideline, first draft</h1>'\n")
	var shot bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	img.Set(3, 3, color.RGBA{R: 200, A: 255})
	_ = png.Encode(&shot, img)
	write(".ralph/preview/home-desktop.png", shot.String())
	write(".ralph/preview/home-phone.png", shot.String())
	write(".ralph/preview/history/task-2-iteration-2/home-desktop.png", shot.String())
	if err := f.st.AddGateResults(context.Background(), []store.GateResult{{TaskID: f.task, Iteration: 2, Gate: "ui-renders", Status: "fail",
		Message: `text fails WCAG AA contrast: [data-section="hero"] p.lead "Tide tables" is #cccccc on #ffffff, 1.60:1`}}); err != nil {
		t.Fatal(err)
	}

	ctx := browser(t, 1280, 800)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/preview")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the app's frame", `!!document.getElementById("preview-frame")`, 10*time.Second)
	waitForFrame(t, ctx, "Tideline, first draft", 15*time.Second)
	if got := eval[int](t, ctx, `document.querySelectorAll(".preview-shots img").length`); got != 3 {
		t.Errorf("%d screenshots shown, want 3 (desktop and phone, and the attempt's desktop)", got)
	}
	if got := eval[bool](t, ctx, `[...document.querySelectorAll(".preview-shots img")].every(i => i.complete && i.naturalWidth === 40)`); !got {
		t.Error("the screenshots did not load")
	}
	if txt := eval[string](t, ctx, `document.querySelector(".preview").innerText`); !strings.Contains(txt, "#cccccc on #ffffff, 1.60:1") || !strings.Contains(txt, "task 2, iteration 2") {
		t.Errorf("the page lacks the ui-renders finding:\n%s", txt)
	}
	// The frame is another origin than the dashboard.
	src := eval[string](t, ctx, `document.getElementById("preview-frame").src`)
	if strings.HasPrefix(src, f.http.URL) {
		t.Errorf("the app is served from the dashboard's origin: %s", src)
	}

	// A change to the working tree shows in the frame; the page itself
	// does not reload (the marker survives).
	eval[bool](t, ctx, `window.previewMarker = true`)
	write("src/main.ts", "document.getElementById('root')!.innerHTML = '<h1>Tideline, second draft</h1>'\n")
	waitForFrame(t, ctx, "Tideline, second draft", 15*time.Second)
	if !eval[bool](t, ctx, `window.previewMarker === true`) {
		t.Error("the page reloaded to show the change")
	}
}

// waitForFrame waits until the page's first frame shows want.
func waitForFrame(t *testing.T, ctx context.Context, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		txt, err := chromedp.Run(ctx, frameText())
		if err == nil && strings.Contains(txt, want) {
			return
		}
		last = txt
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the app's frame does not show %q; it shows %q", want, last)
}

// frameText is the body text of the page's first child frame, read in an
// isolated world of that frame.
func frameText() chromedp.Action[string] {
	return func(ctx context.Context, t *chromedp.Target) (string, error) {
		tree, err := cdp.Call(ctx, t, cdppage.GetFrameTree, cdp.Empty{})
		if err != nil || tree.FrameTree == nil || len(tree.FrameTree.ChildFrames) == 0 {
			return "", err
		}
		w, err := cdp.Call(ctx, t, cdppage.CreateIsolatedWorld, cdppage.CreateIsolatedWorldParams{FrameID: tree.FrameTree.ChildFrames[0].Frame.ID})
		if err != nil {
			return "", err
		}
		yes := true
		r, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: `document.body ? document.body.innerText : ""`, ContextID: w.ExecutionContextID, ReturnByValue: &yes})
		if err != nil || r.Result == nil {
			return "", err
		}
		var s string
		_ = json.Unmarshal(r.Result.Value, &s)
		return s, nil
	}
}

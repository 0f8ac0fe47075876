// Package render loads a web app in headless Chromium and reports what a
// person would see of it: what the page threw or logged as an error, and
// an audit of the rendered page (an empty body, the boxes of the planned
// sections, text that fails WCAG AA contrast against its rendered
// background, content wider than a phone, images without alt, unnamed
// buttons, theme tokens used), with a screenshot. One Browser is started
// once and serves every page of a run, each in a tab of its own.
package render

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Viewport is a window size a page is loaded at.
type Viewport struct {
	// Name names the size in file names and findings: "desktop", "phone".
	Name          string
	Width, Height int
	// Mobile emulates a phone: a touch screen and the page's viewport meta.
	Mobile bool
}

// The sizes the ui-renders gate loads each screen at.
var (
	Desktop = Viewport{Name: "desktop", Width: 1280, Height: 800}
	Phone   = Viewport{Name: "phone", Width: 390, Height: 844, Mobile: true}
)

// Candidates are the browser programs Find looks for on PATH, in order.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ErrNoBrowser is returned by Find when no browser is found.
var ErrNoBrowser = errors.New("no Chromium or Chrome found")

// Find returns the browser to use: configured when set (a path, or a name
// looked up on PATH), else the first of Candidates on PATH. Nothing is
// downloaded.
func Find(configured string) (string, error) {
	if configured != "" {
		p, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("browser %q: %w", configured, err)
		}
		return p, nil
	}
	for _, c := range Candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on PATH (looked for %s)", ErrNoBrowser, strings.Join(Candidates, ", "))
}

// Browser is one headless browser process; its pages open as tabs.
type Browser struct {
	ctx         context.Context // the browser's own context
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
	logger      *slog.Logger
	once        sync.Once

	mu   sync.Mutex
	tabs map[string]*tab // by viewport name
}

// tab is a tab kept open at one viewport: the pages of that size load
// in it one after another.
type tab struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
}

// AllocatorOptions are the flags ralph starts headless Chromium exe
// with, for the user's app and for the dashboard's browser tests alike:
// no first-run, sync, update or background work, and sRGB colours, so
// that what a page renders depends on the page.
func AllocatorOptions(exe string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("force-color-profile", "srgb"),
	}
}

// Start starts the browser at exe headless, with a fresh profile that is
// removed when it closes. It outlives ctx: Close ends it (and it dies
// with ralph, by the parent-death signal chromedp sets).
func Start(ctx context.Context, exe string, logger *slog.Logger) (*Browser, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := append(AllocatorOptions(exe),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(Desktop.Width, Desktop.Height),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	b := &Browser{ctx: bctx, cancel: cancel, cancelAlloc: cancelAlloc, logger: logger, tabs: map[string]*tab{}}
	start := time.Now()
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err := <-started:
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("start %s: %w", exe, err)
		}
	case <-ctx.Done():
		b.Close()
		return nil, ctx.Err()
	}
	logger.Debug("browser started", "component", "render", "exe", exe, "elapsed", time.Since(start))
	return b, nil
}

// Close ends the browser and removes its profile.
func (b *Browser) Close() error {
	b.once.Do(func() {
		b.cancel()
		b.cancelAlloc()
	})
	return nil
}

// Problem is an error the page threw or logged.
type Problem struct {
	// Kind is "exception" (uncaught, or an unhandled rejection), "error"
	// (console.error), "dialog" (alert, confirm or prompt; the gate
	// accepts it) or the browser log's source ("network", …).
	Kind    string
	Message string
	// URL, Line and Col are where it happened in what the browser ran;
	// Line and Col are 1-based, zero when unknown.
	URL       string
	Line, Col int
}

// Section is the rendered box of a planned section.
type Section struct {
	Name   string  `json:"name"`
	Found  bool    `json:"found"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	El     string  `json:"el"`
}

// Contrast is rendered text that fails WCAG AA contrast.
type Contrast struct {
	// El describes the element: tag#id.class, under its data-section.
	El   string `json:"el"`
	Text string `json:"text"`
	// FG and BG are the rendered colours, #rrggbb.
	FG    string  `json:"fg"`
	BG    string  `json:"bg"`
	Ratio float64 `json:"ratio"`
	// Need is 4.5, or 3 for large text.
	Need     float64 `json:"need"`
	Large    bool    `json:"large"`
	FontSize float64 `json:"fontSize"`
}

// Overflow is how far the page is wider than the viewport.
type Overflow struct {
	Viewport    int `json:"viewport"`
	ScrollWidth int `json:"scrollWidth"`
	// Offenders are the elements that stick out, outermost first.
	Offenders []struct {
		El    string `json:"el"`
		Width int    `json:"width"`
		Right int    `json:"right"`
	} `json:"offenders"`
}

// Audit is what the page showed.
type Audit struct {
	// Blank is true when the body has no visible text or media.
	Blank bool `json:"blank"`
	// Text is the start of the body's visible text.
	Text string `json:"text"`
	// ViewportMeta reports whether the page has <meta name="viewport">.
	ViewportMeta bool       `json:"viewportMeta"`
	Sections     []Section  `json:"sections"`
	Contrast     []Contrast `json:"contrast"`
	Overflow     Overflow   `json:"overflow"`
	ImgNoAlt     []struct {
		El  string `json:"el"`
		Src string `json:"src"`
	} `json:"imgNoAlt"`
	ButtonNoName []struct {
		El string `json:"el"`
	} `json:"buttonNoName"`
	// TokensDefined are the custom properties :root or .dark define;
	// TokensUsed those a rule, inline style or utility class uses.
	TokensDefined []string `json:"tokensDefined"`
	TokensUsed    []string `json:"tokensUsed"`
}

// Page is one loaded page.
type Page struct {
	Problems []Problem
	Audit    Audit
	// Screenshot is the whole page as PNG.
	Screenshot []byte
}

//go:embed audit.js
var auditJS string

// PageTimeout bounds loading and auditing one page.
const PageTimeout = 20 * time.Second

// tab returns the tab for vp, opening it at that size the first time.
func (b *Browser) tab(vp Viewport) (*tab, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.tabs[vp.Name]; ok {
		return t, nil
	}
	tctx, cancel := chromedp.NewContext(b.ctx)
	emulate := chromedp.EmulateViewport(int64(vp.Width), int64(vp.Height))
	if vp.Mobile {
		emulate = chromedp.EmulateViewport(int64(vp.Width), int64(vp.Height), chromedp.EmulateMobile)
	}
	if err := chromedp.Do(tctx, emulate); err != nil {
		cancel()
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	t := &tab{ctx: tctx, cancel: cancel}
	b.tabs[vp.Name] = t
	return t, nil
}

// drop closes the tab of vp, after a load that failed in it.
func (b *Browser) drop(vp Viewport, t *tab) {
	b.mu.Lock()
	if b.tabs[vp.Name] == t {
		delete(b.tabs, vp.Name)
	}
	b.mu.Unlock()
	t.cancel()
}

// Load opens url in the tab of vp's size, waits for it to load and
// settle, and returns what it threw or logged, its audit for the named
// sections, and a screenshot. Loads of different sizes run in parallel.
func (b *Browser) Load(ctx context.Context, url string, vp Viewport, sections []string) (*Page, error) {
	t, err := b.tab(vp)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	page, err := b.load(ctx, t, url, vp, sections)
	if err != nil {
		b.drop(vp, t)
	}
	return page, err
}

func (b *Browser) load(ctx context.Context, t *tab, url string, vp Viewport, sections []string) (*Page, error) {
	tctx, cancel := context.WithTimeout(t.ctx, PageTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()

	var mu sync.Mutex
	var problems []Problem
	if err := chromedp.Listen(tctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			// A dialog stops the page until someone answers it: answer
			// it (not from the listener, which must not call the
			// browser) and say so.
			go func() { _, _ = chromedp.Run(tctx, answerDialog()) }()
			mu.Lock()
			problems = append(problems, Problem{Kind: "dialog", Message: fmt.Sprintf("the page called %s(): %q", d.Type, d.Message), URL: d.URL})
			mu.Unlock()
			return
		}
		p, ok := problem(ev)
		if !ok {
			return
		}
		mu.Lock()
		problems = append(problems, p)
		mu.Unlock()
	}); err != nil {
		return nil, fmt.Errorf("listen to the tab: %w", err)
	}
	t0 := time.Now()
	if err := chromedp.Do(tctx, chromedp.Navigate(url),
		// Let the app render: two frames and a moment for effects.
		chromedp.Evaluate[chromedp.Void](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50))))`, chromedp.EvalAwaitPromise),
	); err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	t1 := time.Now()
	args, _ := json.Marshal(map[string]any{"sections": sections})
	raw, err := chromedp.Run(tctx, chromedp.Evaluate[[]byte](auditJS+"("+string(args)+")"))
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", url, err)
	}
	page := &Page{}
	if err := json.Unmarshal(raw, &page.Audit); err != nil {
		return nil, fmt.Errorf("audit %s: %w", url, err)
	}
	t2 := time.Now()
	shot, err := chromedp.Run(tctx, screenshot())
	if err != nil {
		return nil, fmt.Errorf("screenshot %s: %w", url, err)
	}
	page.Screenshot = shot
	b.logger.Debug("page loaded", "component", "render", "url", url, "size", vp.Name,
		"load", t1.Sub(t0), "audit", t2.Sub(t1), "screenshot", time.Since(t2))
	mu.Lock()
	page.Problems = problems
	mu.Unlock()
	return page, nil
}

// answerDialog accepts the dialog the page has open.
func answerDialog() chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		return chromedp.Void{}, err
	}
}

// screenshot captures the whole page as PNG, encoded for speed rather
// than size.
func screenshot() chromedp.Action[[]byte] {
	return func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		yes := true
		r, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format: page.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes, FromSurface: &yes, OptimizeForSpeed: &yes})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	}
}

// problem turns a console event into a Problem: exceptions, console.error
// calls and error entries of the browser log.
func problem(ev any) (Problem, bool) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		if d == nil {
			return Problem{}, false
		}
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			desc, _, _ := strings.Cut(d.Exception.Description, "\n    at ")
			msg = strings.TrimSpace(strings.TrimPrefix(msg, "Uncaught") + " " + desc)
			if strings.HasPrefix(d.Text, "Uncaught (in promise)") {
				msg = "(in promise) " + strings.TrimSpace(desc)
			}
		} else if d.Exception != nil && len(d.Exception.Value) > 0 {
			msg = strings.TrimSpace(d.Text + " " + string(d.Exception.Value))
		}
		p := Problem{Kind: "exception", Message: strings.TrimSpace(msg), URL: d.URL, Line: int(d.LineNumber) + 1, Col: int(d.ColumnNumber) + 1}
		if st := d.StackTrace; st != nil && len(st.CallFrames) > 0 {
			f := st.CallFrames[0]
			p.URL, p.Line, p.Col = f.URL, int(f.LineNumber)+1, int(f.ColumnNumber)+1
		}
		return p, true
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return Problem{}, false
		}
		var parts []string
		for _, a := range ev.Args {
			parts = append(parts, argText(a))
		}
		p := Problem{Kind: "error", Message: strings.Join(parts, " ")}
		if st := ev.StackTrace; st != nil && len(st.CallFrames) > 0 {
			f := st.CallFrames[0]
			p.URL, p.Line, p.Col = f.URL, int(f.LineNumber)+1, int(f.ColumnNumber)+1
		}
		return p, true
	case *log.EventEntryAdded:
		e := ev.Entry
		if e == nil || e.Level != log.EntryLevelError {
			return Problem{}, false
		}
		p := Problem{Kind: string(e.Source), Message: e.Text, URL: e.URL}
		if e.LineNumber > 0 {
			p.Line = int(e.LineNumber) + 1
		}
		return p, true
	}
	return Problem{}, false
}

// argText is how the console shows one argument.
func argText(a *runtime.RemoteObject) string {
	if a == nil {
		return ""
	}
	if len(a.Value) > 0 {
		var s string
		if json.Unmarshal(a.Value, &s) == nil {
			return s
		}
		return string(a.Value)
	}
	if a.Description != "" {
		d, _, _ := strings.Cut(a.Description, "\n    at ")
		return d
	}
	return string(a.Type)
}

package serve

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ralph-harness/ralph/internal/store"
)

// TestBrowserGatesTableStaysReadable: in a real Chromium at a laptop's
// and a phone's size, the gates table's headers and status badges keep
// their words whole, and a long task title stays one line.
func TestBrowserGatesTableStaysReadable(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	long := strings.Repeat("make the login page accessible and fast on every device ", 4)
	task, err := f.st.CreateTask(context.Background(), 3, long, "feature", "script")
	if err != nil {
		t.Fatal(err)
	}
	var results []store.GateResult
	for _, g := range []string{"tests", "lint", "css-theme-complete", "build-succeeds", "app-has-content"} {
		status, msg := "pass", ""
		if g == "lint" {
			status, msg = "fail", "internal/auth/login_handler_with_a_rather_long_name.go:12:3: unused variable sessionTokenRefreshDeadline "+strings.Repeat("and more ", 20)
		}
		results = append(results, store.GateResult{TaskID: task, Iteration: 1, Gate: g, Status: status, Message: msg, Fix: "golangci-lint run ./internal/auth/... --fix"})
	}
	if err := f.st.AddGateResults(context.Background(), results); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{1280, 800}, {390, 844}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			ctx := browser(t, size[0], size[1])
			if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/gates")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the gates table", `document.querySelectorAll(".gate-table .badge").length >= 5`, 10e9)
			screenshot(t, ctx, t.TempDir(), fmt.Sprintf("gates-%dx%d.png", size[0], size[1]))
			// A badge wrapped letter by letter is taller than wide.
			bad := eval[[]string](t, ctx, `[...document.querySelectorAll(".gate-table .badge, .attempt h2 .badge")].
				filter(b => { const r = b.getBoundingClientRect(); return r.height >= r.width || r.height > 2 * parseFloat(getComputedStyle(b).fontSize) }).
				map(b => b.textContent + " " + Math.round(b.getBoundingClientRect().width) + "x" + Math.round(b.getBoundingClientRect().height))`)
			if len(bad) > 0 {
				t.Errorf("status badges wrapped: %q", bad)
			}
			// A header on one line: no taller than its row's text.
			wrapped := eval[[]string](t, ctx, `[...document.querySelectorAll(".gate-table th")].
				filter(h => h.getClientRects().length && h.scrollHeight > 1.8 * parseFloat(getComputedStyle(h).lineHeight || 16)).map(h => h.textContent)`)
			if len(wrapped) > 0 {
				t.Errorf("headers wrapped: %q", wrapped)
			}
			if over := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); over {
				t.Error("the page scrolls sideways")
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/")); err != nil {
				t.Fatal(err)
			}
			lines := eval[float64](t, ctx, `(() => { const h = document.querySelector("#overview h1"); return h.getBoundingClientRect().height / parseFloat(getComputedStyle(h).lineHeight); })()`)
			if lines > 1.5 {
				t.Errorf("the task title takes %.1f lines", lines)
			}
		})
	}
}

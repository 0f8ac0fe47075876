package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/ralph-harness/ralph/internal/render"
)

// The browser tests drive the real binary: ralph serve in one process,
// ralph run in another, Debian's Chromium headless in a third.

var (
	ralphOnce sync.Once
	ralphBin  string
	ralphErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if ralphBin != "" {
		_ = os.RemoveAll(filepath.Dir(ralphBin))
	}
	if code == 0 {
		// No test may leave a goroutine running (goleak.VerifyTestMain,
		// with the binary's clean-up before the check).
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ralphBinary builds ./cmd/ralph once per test binary.
func ralphBinary(t testing.TB) string {
	t.Helper()
	ralphOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ralph-serve-test-")
		if err != nil {
			ralphErr = err
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		ralphBin = filepath.Join(dir, "ralph")
		cmd := exec.Command("go", "build", "-o", ralphBin, "./cmd/ralph")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			ralphErr = fmt.Errorf("go build ./cmd/ralph: %v\n%s", err, out)
		}
	})
	if ralphErr != nil {
		t.Fatal(ralphErr)
	}
	return ralphBin
}

// chromiumPath returns Debian's Chromium (or RALPH_CHROMIUM). Without
// one the test skips, except under CI, where it fails: make test installs
// it (scripts/install-chromium.sh).
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("RALPH_CHROMIUM"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "no Chromium at /usr/bin/chromium (scripts/install-chromium.sh installs it; RALPH_CHROMIUM names another)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns a
// tab's context.
func browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	opts := append(render.AllocatorOptions(chromiumPath(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if width < 500 { // a phone: headless windows are never that narrow
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height), chromedp.EmulateMobile)); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// proc is a ralph process the test started.
type proc struct {
	cmd *exec.Cmd
	out *syncBuffer
	// done is closed when the process has exited; err is then its Wait
	// error.
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startRalph(t testing.TB, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(ralphBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	p := &proc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-p.done
			}
		}
	})
	return p
}

// serveURL starts ralph serve in dir and returns the URL it prints.
func serveURL(t testing.TB, dir string) string {
	t.Helper()
	cmd := exec.Command(ralphBinary(t), "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("ralph serve printed no URL: %v\n%s", err, stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "ralph serve: ")
	if !ok || !strings.Contains(url, "?token=") {
		t.Fatalf("ralph serve printed %q", line)
	}
	tok, err := os.ReadFile(filepath.Join(dir, ".ralph", TokenFile))
	if err != nil || !strings.Contains(url, strings.TrimSpace(string(tok))) {
		t.Fatalf("the token file does not hold the URL's token: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, ".ralph", TokenFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	return url
}

// scriptedWorkspace is a git repository with a scripted agent and an
// orchestration plan.
func scriptedWorkspace(t testing.TB, plan string) string {
	t.Helper()
	dir := gitRepo(t)
	agent := `{"iterations": [
  {"actions": [{"tool": "shell", "argv": ["cp", "plan.tsx", ".ralph/plan.tsx"]}], "final": "planned"},
  {"actions": [{"tool": "write", "path": "step1.txt", "content": "1"}, {"tool": "write", "path": ".ralph/summary.md", "content": "Built\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"},
  {"actions": [{"tool": "write", "path": "step2.txt", "content": "2"}, {"tool": "write", "path": ".ralph/summary.md", "content": "Deployed\n"}, {"tool": "write", "path": ".ralph/status.txt", "content": "complete"}], "final": "done"}
]}`
	for name, body := range map[string]string{"agent.json": agent, "plan.tsx": plan} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// openDashboard opens, in a browser of the given size, the dashboard
// ralph serve shows of a scripted workspace running plan; it returns the
// tab, the workspace and the dashboard's URL.
func openDashboard(t testing.TB, width, height int, plan string) (context.Context, string, string) {
	t.Helper()
	ctx := browser(t, width, height)
	dir := scriptedWorkspace(t, plan)
	url := serveURL(t, dir)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	return ctx, dir, url
}

func waitFor(t testing.TB, ctx context.Context, what, js string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, body)
	}
}

func eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// screenshot saves the page under dir and checks it is not blank.
func screenshot(t testing.TB, ctx context.Context, dir, name string) string {
	t.Helper()
	data, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if n := colours(img); n < 8 {
		t.Fatalf("screenshot %s is blank: %d colours", path, n)
	}
	if out := os.Getenv("RALPH_SCREENSHOT_DIR"); out != "" {
		_ = os.WriteFile(filepath.Join(out, name), data, 0o644)
	}
	return path
}

// colours counts the distinct colours of img, up to 1000.
func colours(img image.Image) int {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
			if len(seen) >= 1000 {
				return len(seen)
			}
		}
	}
	return len(seen)
}

const approvePlan = `<Plan name="deploy">
  <Phase name="Build">
    <Step name="Make">Write step1.txt</Step>
  </Phase>
  <Phase name="Release">
    <Human message="Deploy to prod?" timeout="120s" />
    <Step name="Deploy">Write step2.txt</Step>
  </Phase>
</Plan>
`

// TestBrowserApproveResumesTheRun: a real ralph run waits on a <Human>;
// the open dashboard shows the request without a reload, Approve resumes
// the run, which completes, and the events arrive live.
func TestBrowserApproveResumesTheRun(t *testing.T) {
	ctx, dir, url := openDashboard(t, 1200, 1000, approvePlan)
	waitFor(t, ctx, "the empty state", `document.body.innerText.includes("No run yet")`, 10*time.Second)
	if loc := eval[string](t, ctx, `location.href`); strings.Contains(loc, "token=") {
		t.Errorf("the token stays in the address bar: %s", loc)
	}
	// A marker that a reload would wipe.
	eval[bool](t, ctx, `window.__noReload = true`)
	waitFor(t, ctx, "the live stream", `document.getElementById("live").classList.contains("on")`, 10*time.Second)

	run := startRalph(t, dir, "run", "--script", "agent.json", "ship it")
	waitFor(t, ctx, "the pending request", `[...document.querySelectorAll("#pending .prompt")].some(e => e.textContent.includes("Deploy to prod?"))`, 60*time.Second)
	if !eval[bool](t, ctx, `window.__noReload === true`) {
		t.Fatal("the page reloaded to show the request")
	}
	waitFor(t, ctx, "the iterations in the event stream", `document.querySelectorAll("#events li").length >= 3 && document.getElementById("events").innerText.includes("waiting for a human")`, 20*time.Second)
	waitFor(t, ctx, "the task on the overview", `document.getElementById("overview").innerText.includes("Task 1: ship it")`, 10*time.Second)
	if txt := eval[string](t, ctx, `document.querySelector("#pending .meta").innerText`); !strings.Contains(txt, "waiting") || !strings.Contains(txt, "task 1") {
		t.Errorf("the request does not say who waits and for how long: %q", txt)
	}
	screenshot(t, ctx, t.TempDir(), "dashboard-pending.png")
	if out := os.Getenv("RALPH_SCREENSHOT_DIR"); out != "" { // the README's picture
		if b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
			_ = os.WriteFile(filepath.Join(out, "dashboard.png"), b, 0o644)
		}
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#pending form.answer button.approve`))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-run.done:
		if run.err != nil {
			t.Fatalf("ralph run: %v\n%s", run.err, run.out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not finish after Approve\n%s", run.out.String())
	}
	out := run.out.String()
	if !strings.Contains(out, "request 1 approved") || !strings.Contains(out, "ralph: completed") {
		t.Errorf("run output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "step2.txt")); err != nil {
		t.Error("the step after the approval did not run")
	}
	// No gate of the project's own checked the work: completed, unverified.
	waitFor(t, ctx, "the completed badge", `document.querySelector("#overview .badge.warn")?.textContent === "completed · unverified"`, 10*time.Second)
	waitFor(t, ctx, "why it is unverified", `document.querySelector("#overview .reason").innerText.includes("no gate of the project's own")`, 10*time.Second)
	waitFor(t, ctx, "the end event", `document.getElementById("events").innerText.includes("completed")`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll("#pending .request").length`); n != 0 {
		t.Errorf("%d requests still shown after approval", n)
	}
	if !eval[bool](t, ctx, `window.__noReload === true`) {
		t.Fatal("the page reloaded")
	}
	path := screenshot(t, ctx, t.TempDir(), "dashboard-completed.png")
	t.Logf("screenshot: %s", path)

	// GET /api/status is what ralph status --json prints.
	res, err := http.Get(strings.Split(url, "?")[0] + "api/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var api, cli map[string]any
	if err := json.NewDecoder(res.Body).Decode(&api); err != nil {
		t.Fatal(err)
	}
	st := exec.Command(ralphBinary(t), "status", "--json")
	st.Dir = dir
	statusOut, err := st.Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(statusOut, &cli); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(api, cli) {
		t.Errorf("GET /api/status differs from ralph status --json:\n%v\n%v", api, cli)
	}
}

const rejectPlan = `<Plan name="deploy">
  <Phase name="Build">
    <Step name="Make">Write step1.txt</Step>
    <Human message="Write the docs too?" onReject="skip" timeout="120s" />
    <Step name="Docs">Write docs.txt</Step>
  </Phase>
  <Phase name="Release">
    <Human message="Deploy to prod?" timeout="120s" />
    <Step name="Deploy">Write step2.txt</Step>
  </Phase>
</Plan>
`

// TestBrowserRejectAndStop: Reject on a phone-sized page skips the step
// the plan says to skip; Stop with a reason ends the run as stopped.
func TestBrowserRejectAndStop(t *testing.T) {
	ctx, dir, _ := openDashboard(t, 390, 844, rejectPlan)
	waitFor(t, ctx, "the live stream", `document.getElementById("live").classList.contains("on")`, 10*time.Second)
	run := startRalph(t, dir, "run", "--script", "agent.json", "ship it")

	waitFor(t, ctx, "the first request", `document.querySelector("#pending .prompt")?.textContent.includes("Write the docs too?")`, 60*time.Second)
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the page is %dpx wide on a 390px phone", w)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#pending form.answer button.reject`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the second request", `document.querySelector("#pending .prompt")?.textContent.includes("Deploy to prod?")`, 30*time.Second)
	waitFor(t, ctx, "the rejection in the stream", `document.getElementById("events").innerText.includes("onReject=skip")`, 10*time.Second)
	screenshot(t, ctx, t.TempDir(), "dashboard-phone.png")

	// Typed and clicked in one script: a live refresh landing between two
	// separate browser commands would leave the value in the form it
	// replaced.
	if !eval[bool](t, ctx, `(() => {
		document.querySelector("#stop-form input[name=reason]").value = "not today";
		document.querySelector("#stop-form button").click();
		return true;
	})()`) {
		t.Fatal("could not fill in the stop form")
	}
	select {
	case <-run.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not stop\n%s", run.out.String())
	}
	if code := run.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("a stopped run exited 0")
	}
	out := run.out.String()
	if !strings.Contains(out, "request 1 rejected") || !strings.Contains(out, "not today") {
		t.Errorf("run output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "docs.txt")); err == nil {
		t.Error("the rejected step ran")
	}
	if _, err := os.Stat(filepath.Join(dir, "step2.txt")); err == nil {
		t.Error("the step after the stop ran")
	}
	waitFor(t, ctx, "the stopped badge", `document.querySelector("#overview .badge.bad")?.textContent === "stopped"`, 10*time.Second)
	waitFor(t, ctx, "the explanation", `document.getElementById("overview").innerText.includes("Someone asked the run to stop")`, 10*time.Second)
	screenshot(t, ctx, t.TempDir(), "dashboard-stopped.png")
}

package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ralph-harness/ralph/internal/store"
)

// fakeRemote is a Remote holding its runs in memory; it records the
// answers and stop requests the dashboard sends.
type fakeRemote struct {
	mu      sync.Mutex
	runs    []RemoteRun
	answers []string
	stops   []string
}

func (f *fakeRemote) Status(ctx context.Context) (any, error) {
	runs, _ := f.Runs(ctx)
	return map[string]any{"workflows": runs}, nil
}

func (f *fakeRemote) Runs(context.Context) ([]RemoteRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.runs)
	for i := range out {
		out[i].Pending = slices.Clone(out[i].Pending)
	}
	return out, nil
}

func (f *fakeRemote) Answer(_ context.Context, run string, id int64, status, response string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.runs {
		r := &f.runs[i]
		if r.ID != run {
			continue
		}
		for j, q := range r.Pending {
			if q.ID == id {
				r.Pending = slices.Delete(r.Pending, j, j+1)
				f.answers = append(f.answers, fmt.Sprintf("%s %d %s %s", run, id, status, response))
				return nil
			}
		}
	}
	return fmt.Errorf("%w %d", store.ErrNoHumanRequest, id)
}

func (f *fakeRemote) Stop(_ context.Context, run, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.runs {
		if f.runs[i].ID == run {
			f.runs[i].Stop = reason
		}
	}
	f.stops = append(f.stops, run+" "+reason)
	return nil
}

func (f *fakeRemote) set(fn func(runs []RemoteRun)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.runs)
}

func (f *fakeRemote) calls() (answers, stops []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answers), slices.Clone(f.stops)
}

// newRemote is two running workflows (a task waiting on request 1, a
// spec waiting on its own request 1) and one that ended.
func newRemote() *fakeRemote {
	return &fakeRemote{runs: []RemoteRun{
		{ID: "ralph-task-aaa", Kind: "task", Name: "ship the release", State: "attempt 2 on worker-a · implement · iteration 3 · 41 events",
			Phase: "implement", Worker: "worker-a", Attempt: 2, Iteration: 3, Events: 41, Running: true,
			Pending: []store.HumanRequest{{ID: 1, Type: "approval", Prompt: "Deploy to prod?", Status: store.HumanPending}}},
		{ID: "ralph-spec-bbb-login", Kind: "spec", Name: "login", State: "attempt 1 on worker-b", Worker: "worker-b", Attempt: 1, Running: true,
			Pending: []store.HumanRequest{{ID: 1, Type: "select", Prompt: "Which provider?", Options: []string{"github", "google"}, Status: store.HumanPending}}},
		{ID: "ralph-task-ccc", Kind: "task", Name: "fix the typo", State: "completed", Worker: "worker-a", Attempt: 1, Closed: "completed",
			Ended: true, ExitCode: 0, Branch: "ralph/task/ccc", Commit: "0123456789abcdef", Transcript: "worker-a:/cache/ralph.db", Stop: "enough"},
	}}
}

// With a Remote, the overview lists the workspace's workflows with their
// state, and every page shows what they wait on, with Approve and Reject
// buttons naming the workflow; the local store's run is not shown.
func TestRemoteOverviewListsTheWorkflows(t *testing.T) {
	fr := newRemote()
	f := newFixture(t, fixtureOpt{temporal: fr})
	code, body, _ := f.do("GET", "/", "", f.readCookie()...)
	if code != 200 {
		t.Fatalf("GET / = %d\n%s", code, body)
	}
	for _, want := range []string{
		"ralph-task-aaa", "task: ship the release", "worker-a", "implement", "<dd>41</dd>", "<dd>3</dd>", "<dd>2</dd>",
		"ralph-spec-bbb-login", "spec: login", "worker-b",
		"ralph-task-ccc", "ralph/task/ccc", "0123456789abcdef", "worker-a:/cache/ralph.db", "stop requested: enough",
		"Deploy to prod?", "Which provider?", `data-workflow="ralph-task-aaa"`, `data-workflow="ralph-spec-bbb-login"`,
		`<button type="submit" name="verdict" value="approve" class="approve">`, "Stop this workflow", "Stop all",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	for _, stale := range []string{"add a login page", "I wrote the login page", "an earlier task"} {
		if strings.Contains(body, stale) {
			t.Errorf("overview shows the local store's %q", stale)
		}
	}
	// The ended workflow has no Stop button: two running, two buttons.
	if n := strings.Count(body, "Stop this workflow"); n != 2 {
		t.Errorf("%d per-workflow Stop buttons, want 2", n)
	}
	// The live refresh fetches the same list.
	_, frag, _ := f.do("GET", "/fragment/overview", "")
	if !strings.Contains(frag, "ralph-spec-bbb-login") || strings.Contains(frag, "add a login page") {
		t.Errorf("overview fragment:\n%s", frag)
	}
	_, pend, _ := f.do("GET", "/fragment/pending", "")
	if !strings.Contains(pend, "Deploy to prod?") || !strings.Contains(pend, "workflow <code>ralph-spec-bbb-login</code>") {
		t.Errorf("pending fragment:\n%s", pend)
	}
	// Other pages carry the pending requests too.
	_, gates, _ := f.do("GET", "/gates", "")
	if !strings.Contains(gates, "Deploy to prod?") {
		t.Error("the gates page does not show the pending request")
	}
}

// Answers go to the workflow that waits on the request: named in the
// body when several wait on the same id; never to the local store.
func TestRemoteAnswersAreSentToTheWorkflow(t *testing.T) {
	fr := newRemote()
	f := newFixture(t, fixtureOpt{temporal: fr})
	local := f.request(store.HumanRequest{Type: "approval", Prompt: "a local request"})

	code, body, _ := f.do("GET", "/api/pending", "")
	var pending []struct {
		ID       int64  `json:"id"`
		Prompt   string `json:"prompt"`
		Workflow string `json:"workflow"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &pending) != nil || len(pending) != 2 ||
		pending[0].Workflow != "ralph-task-aaa" || pending[1].Workflow != "ralph-spec-bbb-login" {
		t.Fatalf("GET /api/pending = %d %s", code, body)
	}
	if code, _, _ := f.do("POST", "/api/pending/1/approve", "", "Content-Type", "application/json"); code != http.StatusUnauthorized {
		t.Errorf("approve without the token = %d, want 401", code)
	}
	code, body, _ = f.do("POST", "/api/pending/1/approve", "", bearer...)
	if code != http.StatusConflict || !strings.Contains(body, "ralph-task-aaa, ralph-spec-bbb-login") {
		t.Errorf("approving id 1 pending in two workflows = %d %s, want 409 naming both", code, body)
	}
	code, body, _ = f.do("POST", "/api/pending/1/approve", `{"workflow": "ralph-spec-bbb-login", "response": "gitlab"}`, bearer...)
	if code != http.StatusBadRequest {
		t.Errorf("a choice not offered = %d %s, want 400", code, body)
	}
	code, body, _ = f.do("POST", "/api/pending/1/approve", `{"workflow": "ralph-spec-bbb-login", "response": "github"}`, bearer...)
	if code != 200 || !strings.Contains(body, "approved request 1 of workflow ralph-spec-bbb-login") {
		t.Fatalf("approve in the named workflow = %d %s", code, body)
	}
	// Now only the task waits on 1: no name needed.
	code, body, _ = f.do("POST", "/api/pending/1/reject", `{"response": "not today"}`, bearer...)
	if code != 200 || !strings.Contains(body, "rejected request 1 of workflow ralph-task-aaa") {
		t.Fatalf("reject = %d %s", code, body)
	}
	if code, body, _ := f.do("POST", "/api/pending/1/approve", "", bearer...); code != http.StatusNotFound {
		t.Errorf("approving an answered request = %d %s, want 404", code, body)
	}
	answers, _ := fr.calls()
	if want := []string{"ralph-spec-bbb-login 1 approved github", "ralph-task-aaa 1 rejected not today"}; !slices.Equal(answers, want) {
		t.Errorf("answers sent = %q, want %q", answers, want)
	}
	if got := pendingStatus(t, f, local.ID); got != store.HumanPending {
		t.Errorf("the local store's request became %q", got)
	}
}

// POST /api/stop sends the stop signal: to the workflow named, else to
// every running one; never to the ended one or the local store.
func TestRemoteStopIsSentToTheWorkflows(t *testing.T) {
	fr := newRemote()
	f := newFixture(t, fixtureOpt{temporal: fr})
	code, body, _ := f.do("POST", "/api/stop", `{"workflow": "ralph-spec-bbb-login", "reason": "wrong spec"}`, bearer...)
	if code != 200 || !strings.Contains(body, "workflow ralph-spec-bbb-login stops after the current iteration") {
		t.Fatalf("stop one = %d %s", code, body)
	}
	if code, body, _ := f.do("POST", "/api/stop", `{"workflow": "ralph-task-ccc"}`, bearer...); code != http.StatusConflict {
		t.Errorf("stopping an ended workflow = %d %s, want 409", code, body)
	}
	code, body, _ = f.do("POST", "/api/stop", "", bearer...)
	if code != 200 || !strings.Contains(body, "workflows ralph-task-aaa, ralph-spec-bbb-login stop") {
		t.Fatalf("stop all = %d %s", code, body)
	}
	_, stops := fr.calls()
	want := []string{"ralph-spec-bbb-login wrong spec", "ralph-task-aaa stopped from the dashboard", "ralph-spec-bbb-login stopped from the dashboard"}
	if !slices.Equal(stops, want) {
		t.Errorf("stops sent = %q, want %q", stops, want)
	}
	if v, ok, _ := f.st.State(context.Background(), store.KeyStopRequest); ok {
		t.Errorf("the local store got a stop request %q", v)
	}
	fr.set(func(runs []RemoteRun) {
		for i := range runs {
			runs[i].Running = false
		}
	})
	if code, body, _ := f.do("POST", "/api/stop", "", bearer...); code != http.StatusConflict || !strings.Contains(body, "no Temporal workflow of this workspace is running") {
		t.Errorf("stop with nothing running = %d %s", code, body)
	}
}

// Pages about this checkout's own runs say in a line that they do not
// apply instead of showing the local store; their API answers 501.
func TestRemotePagesThatDoNotApply(t *testing.T) {
	fr := newRemote()
	f := newFixture(t, fixtureOpt{temporal: fr})
	snap := saveSnapshot(t, f, "a.txt", "one")
	for _, path := range []string{"/events", "/gates", "/plan", "/approvals", "/snapshots", "/snapshots/" + snap.Name, "/snapshots/" + snap.Name + "/rollback", "/specs"} {
		code, body, _ := f.do("GET", path, "")
		if code != 200 || !strings.Contains(body, "This dashboard follows Temporal workflows") {
			t.Errorf("GET %s = %d, without the line saying why:\n%s", path, code, body)
		}
		for _, stale := range []string{"I wrote the login page", "2 tests failed", snap.Name + "</a>", "Roll back and save"} {
			if strings.Contains(body, stale) {
				t.Errorf("GET %s shows the local %q", path, stale)
			}
		}
	}
	if _, body, _ := f.do("GET", "/specs", ""); !strings.Contains(body, "spec: login") || strings.Contains(body, "task: ship the release") {
		t.Errorf("the specs page does not list just the spec workflows:\n%s", body)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/events"}, {"GET", "/api/snapshots"}, {"GET", "/api/specs"},
		{"GET", "/api/snapshots/" + snap.Name + "/diff"}, {"POST", "/api/snapshots/" + snap.Name + "/rollback"},
	} {
		if code, body, _ := f.do(c.method, c.path, "", bearer...); code != http.StatusNotImplemented {
			t.Errorf("%s %s = %d %s, want 501", c.method, c.path, code, body)
		}
	}
	code, body, _ := f.do("GET", "/api/status", "")
	if code != 200 || !strings.Contains(body, "ralph-task-ccc") {
		t.Errorf("GET /api/status = %d %s", code, body)
	}
}

// The event stream carries a state message whenever what the workflows
// show changes, so the pages refresh without a reload.
func TestRemoteStreamFollowsTheWorkflows(t *testing.T) {
	fr := newRemote()
	f := newFixture(t, fixtureOpt{temporal: fr})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/events/stream?html=1", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	states := make(chan string)
	go func() {
		defer close(states)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				states <- line
			}
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case line, ok := <-states:
			if !ok {
				t.Fatalf("the stream ended waiting for %s", what)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: %v in %s", what, err, line)
			}
			return m
		case <-ctx.Done():
			t.Fatalf("no state message for %s", what)
		}
		return nil
	}
	if m := next("the first state"); m["pending"] != float64(2) || m["running"] != true || m["workflow"] != "ralph-task-aaa" {
		t.Errorf("first state = %v", m)
	}
	fr.set(func(runs []RemoteRun) {
		runs[1].Pending = nil
		runs[1].Iteration = 4
	})
	if m := next("the answered request"); m["pending"] != float64(1) {
		t.Errorf("state after a change = %v", m)
	}
}

// In a browser, the Approve button of a workflow's request and a
// workflow's Stop button send the answer and the stop to that workflow,
// and the page follows the change live, without a reload.
func TestBrowserRemoteApproveAndStop(t *testing.T) {
	fr := newRemote()
	f := newFixture(t, fixtureOpt{temporal: fr})
	// The browser closes first (cleanups run last first): the server's
	// Close waits for its event stream.
	ctx := browser(t, 1200, 1000)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+testToken)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "both workflows' requests", `document.querySelectorAll("#pending .request").length === 2`, 10*time.Second)
	waitFor(t, ctx, "the live stream", `document.getElementById("live").classList.contains("on")`, 10*time.Second)
	eval[bool](t, ctx, `window.__noReload = true`)
	screenshot(t, ctx, shotDir(t), "dashboard-temporal.png")
	const specForm = `#pending form[data-workflow="ralph-spec-bbb-login"]`
	// A change elsewhere re-renders the requests while the person has
	// picked an option but not clicked yet: the pick survives. (Picked
	// and marked in one script, so no refresh falls in between.)
	eval[bool](t, ctx, `(() => {
		const f = document.querySelector('`+specForm+`');
		f.querySelector("select[name=response]").value = "google";
		f.dataset.before = "1";
		return true;
	})()`)
	fr.set(func(runs []RemoteRun) { runs[0].State = "iteration 3 · a changed state line" })
	waitFor(t, ctx, "the requests to re-render", `document.getElementById("overview").innerText.includes("a changed state line") && !document.querySelector('`+specForm+`').dataset.before`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('`+specForm+` select[name=response]').value`); got != "google" {
		t.Fatalf("the picked option after a refresh = %q, want google", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(specForm+` button.approve`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the spec's request to go", `document.querySelectorAll("#pending .request").length === 1 && document.getElementById("pending").innerText.includes("Deploy to prod?")`, 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#overview form.stop[data-workflow="ralph-task-aaa"] button`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the stop request on the overview", `document.getElementById("overview").innerText.includes("stop requested: stopped from the dashboard")`, 10*time.Second)
	if !eval[bool](t, ctx, `window.__noReload === true`) {
		t.Error("the page reloaded")
	}
	answers, stops := fr.calls()
	if want := []string{"ralph-spec-bbb-login 1 approved google"}; !slices.Equal(answers, want) {
		t.Errorf("answers sent = %q, want %q", answers, want)
	}
	if want := []string{"ralph-task-aaa stopped from the dashboard"}; !slices.Equal(stops, want) {
		t.Errorf("stops sent = %q, want %q", stops, want)
	}
}

// shotDir is where screenshots go: RALPH_SCREENSHOT_DIR, else a
// temporary folder.
func shotDir(t *testing.T) string {
	if d := os.Getenv("RALPH_SCREENSHOT_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

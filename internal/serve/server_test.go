package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/secrets"
	"github.com/ralph-harness/ralph/internal/snapshot"
	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

const testToken = "0123456789abcdef0123456789abcdef"

// fixture is a workspace with a run's history in its store and a
// dashboard serving it.
type fixture struct {
	t    *testing.T
	ws   *workspace.Workspace
	st   *store.Store // the "other process": a second connection
	srv  *Server
	http *httptest.Server
	task int64
}

func gitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

type fixtureOpt struct {
	noDB     bool
	remote   bool
	temporal Remote
	secrets  []string
	noEvents bool
	// poll is Options.Poll; 0 means 20ms.
	poll time.Duration
}

func newFixture(t *testing.T, o fixtureOpt) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := gitRepo(t)
	ws, err := workspace.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ws: ws}
	if !o.noDB {
		st, err := store.Open(ctx, ws.Path(workspace.Database))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f.st = st
		if _, err := st.CreateTask(ctx, 1, "an earlier task", "feature", "script"); err != nil {
			t.Fatal(err)
		}
		_ = st.EndTask(ctx, 1, store.TaskDone, "max-iterations", "used 3 of 3 iterations")
		f.task, err = st.CreateTask(ctx, 2, "add a login page", "feature", "script")
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			_ = st.StartIteration(ctx, f.task, i, "plan", "")
			_ = st.EndIteration(ctx, store.Iteration{TaskID: f.task, Number: i, Outcome: "continue", ToolCalls: 2, CostUSD: 0.01 * float64(i), InputTokens: 1000, OutputTokens: 200})
		}
		if !o.noEvents {
			f.event(store.Event{Kind: "tool_call", Tool: "write", Data: `{"path":"login.html"}`})
			f.event(store.Event{Kind: "text", Text: "I wrote the login page"})
			f.event(store.Event{Source: store.SourceHarness, Kind: "gates", Text: "done: running 2 quality gates"})
		}
		_ = st.AddGateResults(ctx, []store.GateResult{
			{TaskID: f.task, Iteration: 2, Gate: "tests", Status: "fail", Message: "2 tests failed", Fix: "go test ./..."},
			{TaskID: f.task, Iteration: 2, Gate: "lint", Status: "pass"},
			{TaskID: f.task, Iteration: 2, Gate: "plan-diff", Status: "skip", Message: "no plan to compare"},
		})
	}
	if o.poll == 0 {
		o.poll = 20 * time.Millisecond
	}
	srv, err := New(Options{Workspace: ws, Token: testToken, Loopback: !o.remote, Secrets: o.secrets, Poll: o.poll,
		Remote: o.temporal, RemotePoll: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go srv.Watch(wctx)
	f.srv = srv
	f.http = httptest.NewServer(srv.Handler())
	t.Cleanup(f.http.Close)
	return f
}

func (f *fixture) event(e store.Event) int64 {
	f.t.Helper()
	e.TaskID, e.Iteration = f.task, 2
	id, err := f.st.AddEvent(context.Background(), e)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

func (f *fixture) request(r store.HumanRequest) store.HumanRequest {
	f.t.Helper()
	r.TaskID = f.task
	got, err := f.st.RequestHuman(context.Background(), r)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

// do sends a request and returns the status and body.
func (f *fixture) do(method, path, body string, header ...string) (int, string, http.Header) {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

var bearer = []string{"Authorization", "Bearer " + testToken}

func TestLoopbackReadsAreOpenAndShowTheRun(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	code, body, _ := f.do("GET", "/", "")
	if code != 200 {
		t.Fatalf("GET / = %d\n%s", code, body)
	}
	for _, want := range []string{"Task 2: add a login page", "I wrote the login page", "an earlier task", "max-iterations", "2 tests failed", "$0.0300"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if strings.Contains(body, testToken) {
		t.Error("a page served without the token hands the token out")
	}
	if !strings.Contains(body, "Read-only") {
		t.Error("an unauthenticated page does not say it is read-only")
	}
}

func TestTokenInURLSetsCookieAndPageGetsTheToken(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	code, _, h := f.do("GET", "/events?token="+testToken+"&kind=text", "")
	if code != http.StatusSeeOther {
		t.Fatalf("GET with token = %d, want 303", code)
	}
	if loc, _, _ := strings.Cut(h.Get("Location"), "#"); strings.Contains(loc, "token") || !strings.Contains(loc, "kind=text") {
		t.Errorf("redirect to %q: want the token taken out and the rest kept", loc)
	}
	if loc := h.Get("Location"); !strings.HasSuffix(loc, "#token="+testToken) {
		t.Errorf("redirect to %q: want the token in the fragment, for the page's script", loc)
	}
	cookie := h.Get("Set-Cookie")
	if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Errorf("Set-Cookie = %q", cookie)
	}
	// Every local port receives a loopback cookie: it is not the token,
	// and it is named for this dashboard.
	if strings.Contains(cookie, testToken) || strings.HasPrefix(cookie, "ralph_token=") {
		t.Errorf("Set-Cookie = %q: the cookie carries the token or a name another dashboard uses", cookie)
	}
	other, err := New(Options{Workspace: f.ws, Token: strings.Repeat("9", 32)})
	if err != nil {
		t.Fatal(err)
	}
	if other.cookieName() == f.srv.cookieName() {
		t.Error("two dashboards share a cookie name")
	}
	if _, _, h := f.do("GET", "//evil.example/x?token="+testToken, ""); !strings.HasPrefix(h.Get("Location"), "/#") {
		t.Errorf("a tokened //host path redirects to %q", h.Get("Location"))
	}
	_, body, _ := f.do("GET", "/", "", "Cookie", strings.Split(cookie, ";")[0])
	if strings.Contains(body, testToken) {
		t.Error("a page opened with the read cookie hands out the token")
	}
	if !strings.Contains(body, "You can act from this page") {
		t.Error("a page opened with the read cookie does not offer its actions")
	}
	if code, _, _ := f.do("POST", "/api/stop", "", "Cookie", strings.Split(cookie, ";")[0]); code != http.StatusUnauthorized {
		t.Errorf("POST /api/stop with the read cookie = %d, want 401", code)
	}
	_, body, _ = f.do("GET", "/", "", bearer...)
	if !strings.Contains(body, `<meta name="ralph-token" content="`+testToken+`">`) {
		t.Error("a page opened with the token does not pass it to its script")
	}
}

// readCookie is the header a browser that opened the printed URL sends.
func (f *fixture) readCookie() []string {
	return []string{"Cookie", f.srv.cookieName() + "=" + f.srv.readCredential()}
}

func TestNonLoopbackNeedsTheTokenForEveryRequest(t *testing.T) {
	f := newFixture(t, fixtureOpt{remote: true})
	for _, p := range []string{"/", "/events", "/api/status", "/api/pending", "/api/events", "/static/app.js", "/api/events/stream"} {
		code, body, _ := f.do("GET", p, "")
		if code != http.StatusUnauthorized {
			t.Errorf("GET %s without token = %d, want 401", p, code)
		}
		if strings.Contains(body, "login page") {
			t.Errorf("GET %s without token leaks the run", p)
		}
		if code, _, _ := f.do("GET", p, "", "Authorization", "Bearer wrong"+testToken[5:]); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token = %d, want 401", p, code)
		}
	}
	if code, body, _ := f.do("GET", "/api/pending", "", bearer...); code != 200 {
		t.Errorf("GET /api/pending with bearer = %d %s", code, body)
	}
	if code, body, _ := f.do("GET", "/", "", f.readCookie()...); code != 200 || !strings.Contains(body, "add a login page") {
		t.Errorf("GET / with cookie = %d", code)
	}
}

func TestLoopbackRefusesForeignHostNames(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	req, _ := http.NewRequest("GET", f.http.URL+"/api/status", nil)
	req.Host = "attacker.example:7777"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("GET with Host attacker.example = %d, want 421", res.StatusCode)
	}
}

func pendingStatus(t *testing.T, f *fixture, id int64) string {
	t.Helper()
	r, err := f.st.HumanRequestByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

func TestMutationsNeedTheBearerToken(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	r := f.request(store.HumanRequest{Prompt: "Deploy to prod?"})
	path := "/api/pending/" + itoa(r.ID) + "/approve"
	cases := []struct {
		name   string
		header []string
	}{
		{"none", nil},
		{"wrong", []string{"Authorization", "Bearer ffffffffffffffffffffffffffffffff"}},
		{"cookie only", f.readCookie()},
		{"token in query", nil},
	}
	for _, c := range cases {
		p := path
		if c.name == "token in query" {
			p += "?token=" + testToken
		}
		code, body, _ := f.do("POST", p, "", c.header...)
		if code != http.StatusUnauthorized {
			t.Errorf("%s: POST = %d, want 401\n%s", c.name, code, body)
		}
		if !strings.Contains(body, `"error"`) {
			t.Errorf("%s: no JSON error: %s", c.name, body)
		}
	}
	for _, p := range []string{"/api/stop", "/api/snapshots/task-1-pre/rollback", "/api/pending/" + itoa(r.ID) + "/reject"} {
		if code, _, _ := f.do("POST", p, ""); code != http.StatusUnauthorized {
			t.Errorf("POST %s without token = %d, want 401", p, code)
		}
	}
	if s := pendingStatus(t, f, r.ID); s != store.HumanPending {
		t.Fatalf("after refused requests the request is %s", s)
	}
	code, body, _ := f.do("POST", path, `{"response":"go"}`, bearer...)
	if code != 200 {
		t.Fatalf("approve with token = %d %s", code, body)
	}
	if s := pendingStatus(t, f, r.ID); s != store.HumanApproved {
		t.Errorf("after approve the request is %s", s)
	}
	if !strings.Contains(body, "no run is waiting") {
		t.Errorf("approve response does not say no run waits: %s", body)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func jsonNum(n int64) string { return strconv.FormatInt(n, 10) }

func TestCrossOriginMutationsAreRefused(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	r := f.request(store.HumanRequest{Prompt: "Deploy?"})
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "http://evil.example"},
		{"Sec-Fetch-Site", "same-site", "Origin", "http://other.localhost:7777"},
	} {
		hdr := append(append([]string{}, bearer...), h...)
		code, body, _ := f.do("POST", "/api/pending/"+itoa(r.ID)+"/reject", "", hdr...)
		if code != http.StatusForbidden {
			t.Errorf("POST with %v = %d, want 403\n%s", h, code, body)
		}
	}
	if s := pendingStatus(t, f, r.ID); s != store.HumanPending {
		t.Fatalf("a cross-origin request changed the request to %s", s)
	}
	// The same origin is fine.
	code, _, _ := f.do("POST", "/api/pending/"+itoa(r.ID)+"/reject", "", append(append([]string{}, bearer...), "Sec-Fetch-Site", "same-origin", "Origin", f.http.URL)...)
	if code != 200 || pendingStatus(t, f, r.ID) != store.HumanRejected {
		t.Errorf("same-origin reject = %d", code)
	}
}

func TestAnswerErrors(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	text := f.request(store.HumanRequest{Type: store.HumanText, Prompt: "Which region?", StepKey: "a"})
	sel := f.request(store.HumanRequest{Type: store.HumanSelect, Prompt: "Which?", Options: []string{"eu", "us"}, StepKey: "b"})
	cases := []struct {
		path, body string
		code       int
		want       string
	}{
		{"/api/pending/999/approve", "", 404, "no pending request 999"},
		{"/api/pending/abc/approve", "", 404, "no pending request"},
		{"/api/pending/" + itoa(text.ID) + "/approve", "", 400, "asks for text"},
		{"/api/pending/" + itoa(sel.ID) + "/approve", `{"response":"mars"}`, 400, "eu, us"},
		{"/api/pending/" + itoa(sel.ID) + "/approve", `{not json`, 400, "not the JSON"},
		{"/api/pending/" + itoa(sel.ID) + "/approve", `{"response":"eu"}`, 200, "approved request"},
		{"/api/pending/" + itoa(sel.ID) + "/reject", "", 409, "is not pending: it was approved"},
		{"/api/stop", `{"reason":"x"}`, 409, "no ralph run is active"},
		{"/api/nope", "", 404, "no such API endpoint"},
	}
	for _, c := range cases {
		code, body, h := f.do("POST", c.path, c.body, bearer...)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("POST %s %s = %d %s; want %d containing %q", c.path, c.body, code, body, c.code, c.want)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("POST %s: Content-Type %q", c.path, h.Get("Content-Type"))
		}
	}
	if s := pendingStatus(t, f, text.ID); s != store.HumanPending {
		t.Errorf("a refused approve changed the text request to %s", s)
	}
	for _, p := range []string{"/nope", "/snapshots/nope", "/fragment/nope"} {
		if code, body, _ := f.do("GET", p, ""); code != 404 || !strings.Contains(body, "<!doctype html>") {
			t.Errorf("GET %s = %d, want a 404 page", p, code)
		}
	}
}

func TestStopWhileARunHoldsTheWorkspace(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	lock, err := f.ws.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	code, body, _ := f.do("POST", "/api/stop", `{"reason":"lunch"}`, bearer...)
	if code != 200 || !strings.Contains(body, "stop requested") {
		t.Fatalf("stop = %d %s", code, body)
	}
	v, ok, err := f.st.State(context.Background(), store.KeyStopRequest)
	if err != nil || !ok || v != "lunch" {
		t.Errorf("stop request in the store = %q %v %v", v, ok, err)
	}
	// The overview offers the stop button to a page with the token.
	_, page, _ := f.do("GET", "/", "", f.readCookie()...)
	if !strings.Contains(page, `id="stop-form"`) {
		t.Error("the overview of a running task has no stop form")
	}
}

func saveSnapshot(t *testing.T, f *fixture, file, content string) snapshot.Snapshot {
	t.Helper()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(f.ws.Root, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := snapshot.Open(ctx, f.ws.Root, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s, err := repo.Save(ctx, snapshot.TaskPre(1), "before task 1")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSnapshotsDiffAndRollback(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	saveSnapshot(t, f, "app.txt", "one\ntwo\nthree\n")
	if err := os.WriteFile(filepath.Join(f.ws.Root, "app.txt"), []byte("one\n2\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(f.ws.Root, "new.txt"), []byte("new\n"), 0o644)

	code, body, _ := f.do("GET", "/api/snapshots", "")
	if code != 200 || !strings.Contains(body, `"name": "task-1-pre"`) {
		t.Fatalf("GET /api/snapshots = %d %s", code, body)
	}
	code, body, _ = f.do("GET", "/api/snapshots/task-1-pre/diff", "")
	if code != 200 || !strings.Contains(body, `"path": "app.txt"`) || !strings.Contains(body, `"change": "modified"`) || !strings.Contains(body, `"path": "new.txt"`) {
		t.Fatalf("diff = %d %s", code, body)
	}
	if code, body, _ := f.do("GET", "/api/snapshots/task-9-pre/diff", ""); code != 404 || !strings.Contains(body, "no snapshot named") {
		t.Errorf("diff of an unknown snapshot = %d %s", code, body)
	}
	_, page, _ := f.do("GET", "/snapshots/task-1-pre", "")
	if !strings.Contains(page, "1 added, 1 modified, 0 deleted") {
		t.Errorf("snapshot page lacks the counts:\n%s", page)
	}
	_, page, _ = f.do("GET", "/snapshots/task-1-pre/file?path=app.txt", "")
	if !strings.Contains(page, `<span class="ddel">- two</span>`) || !strings.Contains(page, `<span class="dadd">&#43; 2</span>`) {
		t.Errorf("file diff page lacks the changed lines:\n%s", page)
	}
	for _, p := range []string{".ralph/serve.token", ".ralph/ralph.db", "../etc/passwd"} {
		if code, _, _ := f.do("GET", "/snapshots/task-1-pre/file?path="+p, ""); code == 200 {
			t.Errorf("file diff of %s = 200", p)
		}
	}
	_, page, _ = f.do("GET", "/snapshots/task-1-pre/rollback", "")
	if !strings.Contains(page, "<strong id=\"undo-name\">rollback-") {
		t.Errorf("rollback confirmation does not name the undo snapshot:\n%s", page)
	}

	// While a run holds the workspace: 409 with its pid, nothing changes.
	lock, err := f.ws.Lock()
	if err != nil {
		t.Fatal(err)
	}
	code, body, _ = f.do("POST", "/api/snapshots/task-1-pre/rollback", "", bearer...)
	lock.Release()
	if code != http.StatusConflict || !strings.Contains(body, `"pid": `+jsonNum(int64(os.Getpid()))) {
		t.Fatalf("rollback under the lock = %d %s", code, body)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws.Root, "app.txt")); string(b) != "one\n2\nthree\n" {
		t.Fatal("a refused rollback changed the tree")
	}
	if code, _, _ := f.do("POST", "/api/snapshots/nope/rollback", "", bearer...); code != 404 {
		t.Errorf("rollback to an unknown snapshot = %d", code)
	}

	code, body, _ = f.do("POST", "/api/snapshots/task-1-pre/rollback", "", bearer...)
	if code != 200 || !strings.Contains(body, `"undo": "rollback-`) {
		t.Fatalf("rollback = %d %s", code, body)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws.Root, "app.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("after rollback app.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(f.ws.Root, "new.txt")); !os.IsNotExist(err) {
		t.Error("after rollback new.txt is still there")
	}
}

func TestSecretsNeverAppear(t *testing.T) {
	const envKey = "sk-test-Zq81uQeMu3kqPe0vN5"      // an env var's value, shaped like no well-known key
	const tomlKey = "hunter2-is-not-a-good-password" // a ralph.toml setting's value
	const shaped = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx"
	dir := t.TempDir()
	toml := "[agents.api]\napi_key_env = \"MY_LLM_KEY_VAR\"\n[extra]\nsmtp_password = \"" + tomlKey + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "ralph.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	vals := secrets.Values([]string{"MY_LLM_KEY_VAR=" + envKey, "HOME=/home/me", "GITHUB_TOKEN=short"}, dir)
	if len(vals) != 2 {
		t.Fatalf("Values = %q, want the env key and the toml password", vals)
	}
	f := newFixture(t, fixtureOpt{secrets: vals})
	leak := "key " + envKey + " pw " + tomlKey + " and " + shaped + " <&>" + envKey
	f.event(store.Event{Kind: "text", Text: leak})
	f.event(store.Event{Kind: "tool_call", Tool: "shell", Data: `{"argv":["curl","-H","x-api-key: ` + envKey + `"]}`})
	f.request(store.HumanRequest{Prompt: "Use key " + envKey + "?"})
	_ = f.ws.Write(workspace.Plan, "<Plan name=\""+tomlKey+"\"><Phase name=\"p\"><Step name=\"s\">"+shaped+"</Step></Phase></Plan>")
	_ = f.ws.Write(workspace.Feedback, "the gate printed "+envKey)
	saveSnapshot(t, f, "env.txt", "KEY="+envKey+"\n")
	_ = os.WriteFile(filepath.Join(f.ws.Root, "env.txt"), []byte("KEY="+tomlKey+"\n"), 0o644)

	paths := []string{"/", "/events", "/events?q=key", "/approvals", "/plan", "/fragment/pending", "/fragment/overview",
		"/api/status", "/api/events", "/api/pending", "/snapshots/task-1-pre/file?path=env.txt"}
	for _, p := range paths {
		code, body, _ := f.do("GET", p, "")
		if code != 200 {
			t.Errorf("GET %s = %d", p, code)
		}
		for _, s := range []string{envKey, tomlKey, shaped, "Zq81uQeMu3kq", "hunter2"} {
			if strings.Contains(body, s) {
				t.Errorf("GET %s shows the secret %q", p, s)
			}
		}
		if !strings.Contains(body, secrets.Redacted) && p != "/fragment/overview" {
			t.Errorf("GET %s shows no %s where a secret was", p, secrets.Redacted)
		}
	}
	// The live stream too.
	msgs := readStream(t, f, "0", 3, "html=1")
	for _, m := range msgs {
		if strings.Contains(m, envKey) || strings.Contains(m, shaped) {
			t.Errorf("the stream shows a secret: %s", m)
		}
	}
}

// readStream reads the SSE stream until it has n event messages and
// returns them.
func readStream(t *testing.T, f *fixture, lastID string, n int, query string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/api/events/stream?"+query, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type %q", ct)
	}
	var out []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			cur.WriteString(line + "\n")
			continue
		}
		if strings.Contains(cur.String(), "event: event\n") {
			out = append(out, cur.String())
			if len(out) == n {
				return out
			}
		}
		cur.Reset()
	}
	t.Fatalf("stream ended after %d of %d events: %v", len(out), n, sc.Err())
	return nil
}

func TestStreamResumesAfterLastEventIDAndFollowsOtherProcesses(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	// Events 1-3 exist; resuming after 1 replays 2 and 3, then one that
	// another connection writes while the stream is open.
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.event(store.Event{Kind: "text", Text: "written later"})
	}()
	msgs := readStream(t, f, "1", 3, "")
	if !strings.HasPrefix(msgs[0], "id: 2\n") || !strings.HasPrefix(msgs[1], "id: 3\n") || !strings.HasPrefix(msgs[2], "id: 4\n") {
		t.Fatalf("stream after 1 = %q", msgs)
	}
	if !strings.Contains(msgs[2], `"text":"written later"`) {
		t.Errorf("the live event = %s", msgs[2])
	}
	// ?after= does the same for clients that cannot set the header.
	msgs = readStream(t, f, "", 1, "after=3&html=1")
	if !strings.HasPrefix(msgs[0], "id: 4\n") || !strings.Contains(msgs[0], `\u003cli class=\"ev agent k-text\"`) {
		t.Errorf("stream after=3 = %q", msgs)
	}
	if code, _, _ := f.do("GET", "/api/events/stream?after=x", ""); code != 400 {
		t.Errorf("stream after=x = %d, want 400", code)
	}
}

// A commit by another process reaches the open streams when it is
// written, not at the next poll of the store: here the poll is an hour.
func TestStreamWakesOnCommitWithoutPolling(t *testing.T) {
	f := newFixture(t, fixtureOpt{poll: time.Hour})
	go func() {
		for _, text := range []string{"first", "second"} {
			time.Sleep(300 * time.Millisecond)
			f.event(store.Event{Kind: "text", Text: text})
		}
	}()
	msgs := readStream(t, f, "3", 2, "")
	if !strings.Contains(msgs[0], `"text":"first"`) || !strings.Contains(msgs[1], `"text":"second"`) {
		t.Errorf("stream = %q", msgs)
	}
}

// Streams woken by the same commits share one read of the store: each
// still gets every event once, in order, in its own format.
func TestStreamsWokenTogetherEachGetEveryEvent(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	const clients = 6
	type result struct {
		msgs []string
		err  error
	}
	results := make(chan result, clients)
	for i := range clients {
		query := ""
		if i%2 == 1 {
			query = "html=1"
		}
		go func() {
			msgs, err := streamMessages(f.http.URL+"/api/events/stream?"+query, "3", 4)
			results <- result{msgs, err}
		}()
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		for i := range 4 {
			f.event(store.Event{Kind: "text", Text: "together " + jsonNum(int64(i))})
			time.Sleep(20 * time.Millisecond)
		}
	}()
	for range clients {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		for i, m := range r.msgs {
			if !strings.HasPrefix(m, "id: "+jsonNum(int64(4+i))+"\n") || !strings.Contains(m, "together "+jsonNum(int64(i))) {
				t.Errorf("message %d = %q", i, m)
			}
		}
	}
}

// streamMessages reads n event messages from the stream at url, after the
// event lastID.
func streamMessages(url, lastID string, n int) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Last-Event-ID", lastID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur strings.Builder
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			cur.WriteString(line + "\n")
			continue
		}
		if strings.Contains(cur.String(), "event: event\n") {
			if out = append(out, cur.String()); len(out) == n {
				return out, nil
			}
		}
		cur.Reset()
	}
	return out, errors.New("stream ended after " + jsonNum(int64(len(out))) + " events")
}

func TestEventsPaginationAndFilters(t *testing.T) {
	f := newFixture(t, fixtureOpt{noEvents: true})
	ctx := context.Background()
	for i := range 450 {
		kind, text := "text", "message "+jsonNum(int64(i))
		if i%10 == 0 {
			kind, text = "tool_call", ""
		}
		if _, err := f.st.AddEvent(ctx, store.Event{TaskID: f.task, Iteration: 1 + i/100, Kind: kind, Tool: "shell", Text: text, Data: `{"n":` + jsonNum(int64(i)) + `}`}); err != nil {
			t.Fatal(err)
		}
	}
	_, page, _ := f.do("GET", "/events", "")
	if n := strings.Count(page, `<li class="ev `); n != pageSize {
		t.Errorf("first page has %d events, want %d", n, pageSize)
	}
	if !strings.Contains(page, "message 449") || strings.Contains(page, "message 249<") {
		t.Error("the first page is not the newest events")
	}
	if !strings.Contains(page, "before=251") {
		t.Errorf("no link to older events")
	}
	_, page, _ = f.do("GET", "/events?before=51", "")
	if n := strings.Count(page, `<li class="ev `); n != 50 || strings.Contains(page, "older →") {
		t.Errorf("last page has %d events", n)
	}
	_, page, _ = f.do("GET", "/events?kind=tool_call", "")
	if n := strings.Count(page, `<li class="ev `); n != 45 {
		t.Errorf("kind=tool_call shows %d events, want 45", n)
	}
	_, page, _ = f.do("GET", "/events?q=MESSAGE+12", "")
	if n := strings.Count(page, `<li class="ev `); n != 10 { // 12, 121…129 minus 120 (a tool call)
		t.Errorf("q=message 12 shows %d events, want 10", n)
	}
	code, body, _ := f.do("GET", "/api/events?after=400&limit=20", "")
	var pg eventsPage
	if err := json.Unmarshal([]byte(body), &pg); code != 200 || err != nil || len(pg.Events) != 20 || pg.Events[0].ID != 401 || pg.Next != 420 {
		t.Errorf("GET /api/events?after=400&limit=20 = %d, %d events, next %d", code, len(pg.Events), pg.Next)
	}
	if code, _, _ := f.do("GET", "/api/events?limit=-1", ""); code != 400 {
		t.Errorf("limit=-1 = %d", code)
	}
	if code, _, _ := f.do("GET", "/events?before=x", ""); code != 400 {
		t.Errorf("before=x = %d", code)
	}
}

func TestEmptyWorkspace(t *testing.T) {
	f := newFixture(t, fixtureOpt{noDB: true})
	code, body, _ := f.do("GET", "/", "")
	if code != 200 || !strings.Contains(body, "No run yet") || !strings.Contains(body, `ralph run "what you want done"`) {
		t.Errorf("empty overview = %d\n%s", code, body)
	}
	for _, p := range []string{"/events", "/gates", "/plan", "/approvals", "/snapshots", "/specs"} {
		if code, body, _ := f.do("GET", p, ""); code != 200 {
			t.Errorf("GET %s in an empty workspace = %d\n%s", p, code, body)
		}
	}
	if code, body, _ := f.do("GET", "/api/pending", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("pending = %d %s", code, body)
	}
	if code, _, _ := f.do("GET", "/api/status", ""); code != http.StatusServiceUnavailable {
		t.Errorf("status = %d, want 503", code)
	}
	if _, err := os.Stat(f.ws.Path(workspace.Database)); !os.IsNotExist(err) {
		t.Error("serving an empty workspace created the database")
	}
	// A run starts: the dashboard picks the database up.
	st, err := store.Open(context.Background(), f.ws.Path(workspace.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, _ = st.CreateTask(context.Background(), 1, "first ever task", "feature", "script")
	if _, body, _ := f.do("GET", "/", ""); !strings.Contains(body, "first ever task") {
		t.Error("the overview does not show a task started after serve")
	}
}

func TestOtherPages(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	ctx := context.Background()
	_ = f.ws.Write(workspace.Plan, "<Plan name=\"deploy\">\n  <Phase name=\"Build\">\n    <Step name=\"Make\">Write it</Step>\n  </Phase>\n  <Nope />\n</Plan>\n")
	_ = f.ws.Write(workspace.Feedback, "fix the tests")
	_ = f.st.PutSpec(ctx, store.SpecRecord{ID: "area/0001-login.md", State: "implementing", ImplAttempts: 2, LastResult: "gates failed"})
	r := f.request(store.HumanRequest{Type: store.HumanSelect, Prompt: "Which region?", Options: []string{"eu", "us"}})
	// An answer from a notification channel shows who gave it, and how.
	tapped := f.request(store.HumanRequest{Type: store.HumanConfirmation, Prompt: "Deploy to prod?", StepKey: "tapped"})
	if _, err := f.st.ResolveHumanAs(ctx, tapped.ID, store.HumanApproved, "", store.Answerer{Via: "telegram", By: "@ann"}); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"/gates":            {"Iteration 2", "2 tests failed", "go test ./...", "failed", `<tr class="g-skip"><td>plan-diff</td><td><span class="badge">skip</span></td><td>no plan to compare</td>`},
		"/plan":             {"&lt;Plan&gt;", "name=&#34;deploy&#34;", "Write it", "FAIL", "fix the tests"},
		"/specs":            {"area/0001-login.md", "implementing", "gates failed"},
		"/approvals":        {"Which region?", `<option>eu</option>`, "request " + itoa(r.ID), "<small>by @ann via telegram</small>"},
		"/api/specs":        {`"spec": "area/0001-login.md"`, `"state": "implementing"`},
		"/api/pending":      {`"prompt": "Which region?"`},
		"/api/status":       {`"message": "add a login page"`},
		"/static/app.js":    {"EventSource"},
		"/static/style.css": {"@media (max-width: 640px)", ".g-skip {"},
	}
	for p, wants := range cases {
		code, body, _ := f.do("GET", p, "")
		if code != 200 {
			t.Errorf("GET %s = %d", p, code)
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q\n%s", p, w, body)
			}
		}
	}
}

func TestLineDiff(t *testing.T) {
	cases := []struct {
		a, b string
		want string
	}{
		{"a\nb\nc\n", "a\nB\nc\n", " a|-b|+B| c"},
		{"", "x\n", "+x"},
		{"x\n", "", "-x"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n8\nnine\n", "…5| 6| 7| 8|-9|+nine"},
		{"same\n", "same\n", "…1"},
	}
	for _, c := range cases {
		var got []string
		for _, l := range lineDiff(c.a, c.b) {
			if l.Skip > 0 {
				got = append(got, "…"+jsonNum(int64(l.Skip)))
				continue
			}
			got = append(got, l.Op+l.Text)
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("lineDiff(%q, %q) = %q, want %q", c.a, c.b, g, c.want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7777": true, "localhost:1": true, "[::1]:80": true, "127.1.2.3:9": true,
		"0.0.0.0:7777": false, ":7777": false, "192.168.1.4:80": false, "example.com:80": false, "localhost.evil.com:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

func TestSpecLogs(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	_ = f.st.PutSpec(context.Background(), store.SpecRecord{ID: "area/0001-login.md", State: "failed", LastResult: "verifier said no"})
	run := filepath.Join(f.ws.Path(workspace.Logs), "specs", "runs", "area", "0001-login", "20261125T010000Z")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(run, "implement-1.log"), []byte("the implementer said hello\n"), 0o644)
	_, page, _ := f.do("GET", "/specs", "")
	link := "/specs/log?spec=area%2f0001-login.md&amp;run=20261125T010000Z&amp;file=implement-1.log"
	if !strings.Contains(page, link) {
		t.Fatalf("the specs page does not link the run log:\n%s", page)
	}
	code, body, _ := f.do("GET", strings.ReplaceAll(link, "&amp;", "&"), "")
	if code != 200 || !strings.Contains(body, "the implementer said hello") {
		t.Errorf("log page = %d\n%s", code, body)
	}
	for _, bad := range []string{
		"/specs/log?spec=../../..&run=x&file=ralph.db",
		"/specs/log?spec=area/0001-login.md&run=..&file=x",
		"/specs/log?spec=area/0001-login.md&run=20261125T010000Z&file=../../x",
		"/specs/log?spec=area/0001-login.md&run=20261125T010000Z&file=missing.log",
	} {
		if code, _, _ := f.do("GET", bad, ""); code != 404 {
			t.Errorf("GET %s = %d, want 404", bad, code)
		}
	}
}

// The overview counts the agent's changes the harness undid or held, and
// links to them; a task without any shows no such line.
func TestOverviewCountsTampers(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	if _, body, _ := f.do("GET", "/", ""); strings.Contains(body, "Tampered") {
		t.Error("an overview without tamper events shows the Tampered line")
	}
	f.event(store.Event{Source: store.SourceHarness, Kind: store.KindTamper, Text: "the agent wrote .ralph/phase.txt; the harness decides the phase (undone)", Data: `{"what":"file","file":".ralph/phase.txt"}`})
	f.event(store.Event{Source: store.SourceHarness, Kind: store.KindTamper, Text: "the agent changed ralph.toml", Data: `{"what":"config"}`})
	_, body, _ := f.do("GET", "/", "")
	if !strings.Contains(body, `<dt>Tampered</dt><dd><a href="/events?kind=tamper"`) || !strings.Contains(body, ">2</a>") {
		t.Errorf("overview does not count 2 tamper events:\n%s", body)
	}
	_, page, _ := f.do("GET", "/events?kind=tamper", "")
	if !strings.Contains(page, "the harness decides the phase (undone)") {
		t.Error("the events page does not list the tamper events")
	}
}

// The overview counts the accesses the sandbox refused the agent, and
// links to them; a task without any shows no such line.
func TestOverviewCountsSandboxDenials(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	if _, body, _ := f.do("GET", "/", ""); strings.Contains(body, "<dt>Sandbox</dt>") {
		t.Error("an overview without sandbox events shows the Sandbox line")
	}
	for _, path := range []string{"/home/u/.ssh/id_ed25519", "/home/u/.bashrc", "/etc/x"} {
		f.event(store.Event{Source: store.SourceHarness, Kind: store.KindSandbox, Tool: "Bash", Text: "the sandbox refused access to " + path, Data: `{"path":"` + path + `"}`})
	}
	_, body, _ := f.do("GET", "/", "")
	if !strings.Contains(body, `<dt>Sandbox</dt><dd><a href="/events?kind=sandbox"`) || !strings.Contains(body, ">3</a>") {
		t.Errorf("overview does not count 3 sandbox events:\n%s", body)
	}
	_, page, _ := f.do("GET", "/events?kind=sandbox", "")
	if !strings.Contains(page, "the sandbox refused access to /home/u/.ssh/id_ed25519") {
		t.Error("the events page does not list the sandbox events")
	}
}

// A request's details — the diff of a protected file — show under its
// first line as they are, lines kept, not folded into the headline.
func TestPendingRequestShowsItsDetails(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	f.request(store.HumanRequest{Type: store.HumanConfirmation, StepKey: "guard:abc",
		Prompt: "The agent changed 1 file(s) the gates depend on (since task-2-pre):\n\nM scripts/check.sh (gate check reads it)\n-grep -q ok out.txt\n+exit 0"})
	_, body, _ := f.do("GET", "/", "")
	if !strings.Contains(body, `<p class="prompt">The agent changed 1 file(s) the gates depend on (since task-2-pre):</p>`) {
		t.Errorf("the headline is not the first line:\n%s", body)
	}
	if !strings.Contains(body, "<pre class=\"details\">M scripts/check.sh (gate check reads it)\n-grep -q ok out.txt\n&#43;exit 0</pre>") {
		t.Errorf("the diff is not shown as it is:\n%s", body)
	}
}

// A key exported only in the run's environment: the run's store scrubs
// it as events enter, so no page of a dashboard that never knew the key
// shows it.
func TestSecretsOfTheRunNeverReachAPage(t *testing.T) {
	const key = "only-in-the-run-Hq4Lz7Pw"
	t.Setenv("ANTHROPIC_API_KEY", key)
	f := newFixture(t, fixtureOpt{}) // the store opens in the run's environment
	f.event(store.Event{Kind: "tool_result", Text: "env says ANTHROPIC_API_KEY=" + key})
	f.event(store.Event{Kind: "tool_call", Tool: "shell", Data: `{"argv":["curl","-H","x-api-key: ` + key + `"]}`})
	_ = f.st.AddGateResults(context.Background(), []store.GateResult{{TaskID: f.task, Iteration: 3, Gate: "tests", Status: "fail", Message: "the test printed " + key}})
	var raw string
	if err := f.st.DB().QueryRow(`SELECT group_concat(text || tool || data, ' ') FROM events`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, key) || !strings.Contains(raw, secrets.Redacted) {
		t.Errorf("the store holds the key: %s", raw)
	}
	for _, p := range []string{"/", "/events", "/events?q=curl", "/gates", "/fragment/overview", "/api/status", "/api/events"} {
		_, body, _ := f.do("GET", p, "")
		if strings.Contains(body, key) {
			t.Errorf("GET %s shows the run's key", p)
		}
	}
}

// A key cut short by a page's one-line summary is scrubbed before it is
// cut, so not even its head shows.
func TestSecretsAreScrubbedBeforeTheyAreCut(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	token := "ghp_" + strings.Repeat("Ab3", 12) // 40 characters
	text := strings.Repeat("x", 174) + " " + token + " tail"
	// Written as an older ralph wrote it, unscrubbed.
	if _, err := f.st.DB().Exec(`INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, 2, ?, 'agent', 'text', '', ?, '')`,
		f.task, time.Now().UTC().Format(time.RFC3339Nano), text); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/events"} {
		_, body, _ := f.do("GET", p, "")
		if strings.Contains(body, "ghp_Ab3Ab3") {
			t.Errorf("GET %s shows the head of a cut token", p)
		}
	}
}

// The file view shows only what the snapshot and the working tree differ
// in: never git's files, the token file wherever it lives, an unchanged
// file, and a secret-looking file only with the token.
func TestFileViewShowsOnlyTheDiff(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	tokenFile := filepath.Join(f.ws.Root, "dash.token")
	f.srv.opt.TokenFile = tokenFile
	_ = os.WriteFile(filepath.Join(f.ws.Root, "same.txt"), []byte("unchanged\n"), 0o644)
	saveSnapshot(t, f, "app.txt", "one\n")
	for name, content := range map[string]string{
		"dash.token": testToken + "\n", ".env": "DATABASE_PASSWORD=pw-83kq\n", "app.txt": "two\n",
		"with space.txt": "a b\n", `quote"d.txt`: "q\n",
	} {
		_ = os.WriteFile(filepath.Join(f.ws.Root, name), []byte(content), 0o644)
	}
	open := func(path string, header ...string) int {
		code, _, _ := f.do("GET", "/snapshots/task-1-pre/file?path="+url.QueryEscape(path), "", header...)
		return code
	}
	for _, p := range []string{".git/config", ".git/HEAD", "dash.token", "same.txt", ".env", "nowhere.txt"} {
		if code := open(p); code != 404 {
			t.Errorf("file view of %s = %d, want 404", p, code)
		}
	}
	if code := open("dash.token", bearer...); code != 404 {
		t.Errorf("file view of the token file with the token = %d, want 404", code)
	}
	for _, p := range []string{"app.txt", "with space.txt", `quote"d.txt`} {
		if code := open(p); code != 200 {
			t.Errorf("file view of %s = %d, want 200", p, code)
		}
	}
	if code := open(".env", bearer...); code != 200 {
		t.Errorf("file view of .env with the token = %d, want 200", code)
	}
}

func TestLANURLs(t *testing.T) {
	nets := []net.Addr{
		&net.IPNet{IP: net.ParseIP("127.0.0.1"), Mask: net.CIDRMask(8, 32)},
		&net.IPNet{IP: net.ParseIP("192.168.1.20"), Mask: net.CIDRMask(24, 32)},
		&net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)},
		&net.IPNet{IP: net.ParseIP("2001:db8::5"), Mask: net.CIDRMask(64, 128)},
	}
	for _, tc := range []struct {
		listen string
		want   []string
	}{
		{"0.0.0.0", []string{"http://192.168.1.20:7777/?token=t"}},
		{"::", []string{"http://192.168.1.20:7777/?token=t", "http://[2001:db8::5]:7777/?token=t"}},
	} {
		got := lanURLs(nets, &net.TCPAddr{IP: net.ParseIP(tc.listen), Port: 7777}, "t")
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("listening on %s: URLs %q, want %q", tc.listen, got, tc.want)
		}
	}
	if got := lanURLs(nets[:1], &net.TCPAddr{IP: net.IPv4zero, Port: 7777}, "t"); len(got) != 1 || got[0] != "http://127.0.0.1:7777/?token=t" {
		t.Errorf("with loopback only: %q", got)
	}
}

func TestSecondDashboardIsRefused(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	l, err := LockWorkspace(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	l.Record("http://127.0.0.1:7777/")
	_, err = LockWorkspace(f.ws)
	var be *BusyError
	if !errors.As(err, &be) || be.PID != os.Getpid() || be.Addr != "http://127.0.0.1:7777/" {
		t.Fatalf("a second lock = %v, want a BusyError naming this process and its address", err)
	}
	l.Release()
	l2, err := LockWorkspace(f.ws)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

func TestMethodsBodiesAndFavicon(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/api/stop", "POST"},
		{"GET", "/api/pending/1/approve", "POST"},
		{"POST", "/events", "GET, HEAD"},
		{"DELETE", "/api/status", "GET, HEAD"},
		{"PUT", "/snapshots", "GET, HEAD"},
	} {
		code, _, h := f.do(c.method, c.path, "", bearer...)
		if code != http.StatusMethodNotAllowed || h.Get("Allow") != c.allow {
			t.Errorf("%s %s = %d Allow %q, want 405 Allow %q", c.method, c.path, code, h.Get("Allow"), c.allow)
		}
	}
	if code, _, _ := f.do("GET", "/no/such/page", ""); code != 404 {
		t.Errorf("GET /no/such/page = %d, want 404", code)
	}
	r := f.request(store.HumanRequest{Prompt: "Deploy?"})
	big := `{"response": "` + strings.Repeat("x", 70<<10) + `"}`
	if code, body, _ := f.do("POST", "/api/pending/"+itoa(r.ID)+"/approve", big, bearer...); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 70 KiB body = %d, want 413\n%s", code, body)
	}
	if pendingStatus(t, f, r.ID) != store.HumanPending {
		t.Error("a refused body answered the request")
	}
	code, body, h := f.do("GET", "/favicon.ico", "")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "image/svg+xml") || !strings.Contains(body, "<svg") {
		t.Errorf("GET /favicon.ico = %d %s", code, h.Get("Content-Type"))
	}
}

// The overview and the events page say how much the task changed: files,
// added and deleted lines, from its task-N-pre snapshot.
func TestTaskDiffStats(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	ctx := context.Background()
	repo, err := snapshot.Open(ctx, f.ws.Root, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(f.ws.Root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n")
	if _, err := repo.Save(ctx, snapshot.TaskPre(1), "before task 1"); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "one\ntwo\n")
	if _, err := repo.Save(ctx, snapshot.TaskPost(1), "after task 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Save(ctx, snapshot.TaskPre(2), "before task 2"); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "uno\ntwo\n")
	write("b.txt", "1\n2\n3\n")
	_, body, _ := f.do("GET", "/", "")
	for _, want := range []string{
		`Changes so far</dt><dd class="diffstat"><a href="/snapshots/task-2-pre"`, `>2 files</a> <span class="plus">+4</span> <span class="minus">−1</span>`,
		`<td class="diffstat"><a href="/snapshots/task-1-pre?to=task-1-post" title="the diff from task-1-pre to task-1-post">1 file</a> <span class="plus">+1</span> <span class="minus">−0</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %s", want)
		}
	}
	_, body, _ = f.do("GET", "/events", "")
	if !strings.Contains(body, "Task 2 changed so far: ") || !strings.Contains(body, `<span class="plus">+4</span>`) {
		t.Error("the events page does not say how much the task changed")
	}
	// A finished task's diff view compares its two snapshots, whatever
	// the working tree holds since.
	_, body, _ = f.do("GET", "/snapshots/task-1-pre?to=task-1-post", "")
	if !strings.Contains(body, "1 files differ from task-1-post") || !strings.Contains(body, `file?path=a.txt&amp;to=task-1-post`) || strings.Contains(body, "b.txt") {
		t.Errorf("the task's diff view:\n%s", body)
	}
	_, body, _ = f.do("GET", "/snapshots/task-1-pre/file?path=a.txt&to=task-1-post", "")
	if !strings.Contains(body, `<span class="dadd">&#43; two</span>`) || strings.Contains(body, "uno") {
		t.Errorf("the task's file diff:\n%s", body)
	}
	if code, _, _ := f.do("GET", "/snapshots/task-1-pre/file?path=b.txt&to=task-1-post", ""); code != 404 {
		t.Errorf("a file outside the task's diff = %d, want 404", code)
	}
	if code, _, _ := f.do("GET", "/snapshots/task-1-pre?to=nowhere", ""); code != 404 {
		t.Errorf("a diff to no snapshot = %d, want 404", code)
	}
}

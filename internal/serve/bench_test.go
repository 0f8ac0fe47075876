package serve

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ralph-harness/ralph/internal/store"
	"github.com/ralph-harness/ralph/internal/workspace"
)

// bigStore returns a workspace whose store holds one task with n events,
// written in one transaction.
func bigStore(b testing.TB, n int) (*workspace.Workspace, *store.Store, int64) {
	b.Helper()
	ctx := context.Background()
	ws, err := workspace.Open(ctx, gitRepo(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(ctx, ws.Path(workspace.Database))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	task, err := st.CreateTask(ctx, 1, "a long run", "feature", "script")
	if err != nil {
		b.Fatal(err)
	}
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events (task_id, iteration, at, source, kind, tool, text, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range n {
		kind, tool, text, data := "text", "", fmt.Sprintf("thinking about step %d of the plan", i), ""
		switch i % 3 {
		case 1:
			kind, tool, text, data = "tool_call", "shell", "", fmt.Sprintf(`{"argv":["go","test","./pkg%d/..."]}`, i)
		case 2:
			kind, text = "tool_result", strings.Repeat("ok  \tgithub.com/x/y\t0.1s\n", 1+i%7)
		}
		if _, err := ins.ExecContext(ctx, task, 1+i/50, at, store.SourceAgent, kind, tool, text, data); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return ws, st, task
}

// BenchmarkEventsFirstPage serves the first page of the event stream of a
// 100,000-event run: the HTML page and the JSON API. Target: < 50 ms.
func BenchmarkEventsFirstPage(b *testing.B) {
	ws, _, _ := bigStore(b, 100_000)
	srv, err := New(Options{Workspace: ws, Token: testToken, Loopback: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	for _, path := range []string{"/events", "/", "/api/events?after=99800&limit=200", "/events?kind=tool_call", "/events?q=pkg99"} {
		b.Run(strings.NewReplacer("/", "_", "?", "_").Replace(path), func(b *testing.B) {
			var worst time.Duration
			for b.Loop() {
				start := time.Now()
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("GET %s = %d", path, rec.Code)
				}
				worst = max(worst, time.Since(start))
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
		})
	}
}

// BenchmarkSSELatencyBrowser measures event-to-browser latency: the time
// from an event's commit by another connection (as a running loop writes
// it) to its row appearing in the dashboard's event list in a real
// headless Chromium. Target: median < 500 ms.
func BenchmarkSSELatencyBrowser(b *testing.B) {
	ctx := browser(b, 1200, 900)
	ws, st, task := bigStore(b, 1000)
	srv, err := New(Options{Workspace: ws, Token: testToken, Loopback: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Watch(wctx)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer hs.CloseClientConnections()
	if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+"/")); err != nil {
		b.Fatal(err)
	}
	waitFor(b, ctx, "the live stream", `document.getElementById("live").classList.contains("on")`, 10*time.Second)
	eval[bool](b, ctx, `(() => {
		window.__seen = {};
		new MutationObserver((ms) => {
			const now = Date.now();
			for (const m of ms) for (const n of m.addedNodes) if (n.dataset && n.dataset.id) window.__seen[n.dataset.id] = now;
		}).observe(document.getElementById("events"), {childList: true});
		return true;
	})()`)
	sent := map[int64]int64{}
	for b.Loop() {
		at := time.Now()
		id, err := st.AddEvent(context.Background(), store.Event{TaskID: task, Iteration: 99, Kind: "text", Text: "live " + at.String()})
		if err != nil {
			b.Fatal(err)
		}
		sent[id] = at.UnixMilli()
		waitFor(b, ctx, "the event", fmt.Sprintf(`window.__seen[%q] !== undefined`, fmt.Sprint(id)), 10*time.Second)
		time.Sleep(time.Duration(20+len(sent)*37%180) * time.Millisecond) // spread events over the poll interval
	}
	seen := eval[map[string]int64](b, ctx, `window.__seen`)
	var lat []float64
	for id, ms := range sent {
		if got, ok := seen[fmt.Sprint(id)]; ok {
			lat = append(lat, float64(got-ms))
		}
	}
	if len(lat) == 0 {
		b.Fatal("no event reached the browser")
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "median-ms")
	b.ReportMetric(lat[len(lat)*9/10], "p90-ms")
	b.ReportMetric(lat[len(lat)-1], "max-ms")
}

// BenchmarkSSELatencyClients measures event-to-client latency with many
// dashboards open: RALPH_BENCH_CLIENTS (default 50) clients read the live
// stream over HTTP as the page does (?html=1); each iteration commits one
// event from another connection, as a running loop does, and waits until
// every client has it. It reports the median and 95th percentile over
// every client and event. Target (issue 31): 15 ms / 40 ms.
func BenchmarkSSELatencyClients(b *testing.B) {
	clients := 50
	if env := os.Getenv("RALPH_BENCH_CLIENTS"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 1 {
			b.Fatalf("RALPH_BENCH_CLIENTS=%q", env)
		}
		clients = n
	}
	ws, st, task := bigStore(b, 1000)
	srv, err := New(Options{Workspace: ws, Token: testToken, Loopback: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Watch(wctx)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer hs.CloseClientConnections()

	type receipt struct {
		id int64
		at time.Time
	}
	got := make(chan receipt, clients*64)
	ready := make(chan struct{}, clients)
	for range clients {
		req, _ := http.NewRequestWithContext(wctx, "GET", hs.URL+"/api/events/stream?html=1", nil)
		res, err := hs.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			first := true
			for sc.Scan() {
				line := sc.Text()
				if first && strings.HasPrefix(line, "event: state") {
					first = false
					ready <- struct{}{}
				}
				if id, ok := strings.CutPrefix(line, "id: "); ok {
					n, _ := strconv.ParseInt(id, 10, 64)
					got <- receipt{n, time.Now()}
				}
			}
		}()
	}
	for range clients {
		<-ready
	}
	var lat []float64
	for b.Loop() {
		at := time.Now()
		id, err := st.AddEvent(context.Background(), store.Event{TaskID: task, Iteration: 99, Kind: "text", Text: "live " + at.String()})
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < clients; {
			select {
			case r := <-got:
				if r.id == id {
					lat = append(lat, float64(r.at.Sub(at).Microseconds())/1000)
					n++
				}
			case <-time.After(10 * time.Second):
				b.Fatalf("event %d reached %d of %d clients", id, n, clients)
			}
		}
		time.Sleep(time.Duration(20+len(lat)*37%180) * time.Millisecond) // spread events over any poll interval
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[len(lat)*95/100], "p95-ms")
	b.ReportMetric(float64(clients), "clients")
}

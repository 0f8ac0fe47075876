package serve

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// stalledClient opens the event stream's backlog and never reads it.
func stalledClient(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /api/events/stream?after=0&html=1 HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	return c
}

// backlogTimes opens the backlog of a store whose last event is last and
// returns how long its first event message, and the whole backlog, took
// to arrive.
func backlogTimes(t testing.TB, url string, last int) (first, all time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := http.Get(url + "/api/events/stream?after=0&html=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	end := fmt.Sprintf("id: %d", last)
	for sc.Scan() {
		line := sc.Text()
		if first == 0 && strings.HasPrefix(line, "id: ") {
			first = time.Since(start)
		}
		if line == end {
			return first, time.Since(start)
		}
	}
	t.Fatalf("the stream ended before its last event: %v", sc.Err())
	return 0, 0
}

func TestStreamBacklogArrivesAPageAtATime(t *testing.T) {
	const n = 100_000
	ws, _, _ := bigStore(t, n)
	srv, err := New(Options{Workspace: ws, Token: testToken, Loopback: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(hs.CloseClientConnections)
	addr := strings.TrimPrefix(hs.URL, "http://")
	for range 6 {
		stalledClient(t, addr)
	}
	// The stalled clients fill their sockets and block; the backlog they
	// asked for is never built whole.
	time.Sleep(500 * time.Millisecond)
	// Built whole, the backlog's first event arrives with its last, after
	// tens of seconds; streamed, after a page. The whole backlog's own
	// time, measured in the same read, is the yardstick: no clock limit
	// that a loaded machine could miss.
	first, all := backlogTimes(t, hs.URL, n)
	t.Logf("first event after %v, the whole backlog after %v", first, all)
	if first > all/4 {
		t.Errorf("the first event of a %d-event backlog took %v of the whole backlog's %v; want it within a page, long before the end", n, first, all)
	}
}

// BenchmarkStreamBacklogMemory opens a 100,000-event backlog (with HTML)
// from six clients that never read and one that reads it all, and
// reports the first event's latency, the peak Go heap and the process's
// peak resident set while they run (bench/serve-backlog.sh runs it).
// Built whole, one client's backlog took 78 MB and six pushed the
// process past 600 MB.
func BenchmarkStreamBacklogMemory(b *testing.B) {
	ws, _, _ := bigStore(b, 100_000)
	srv, err := New(Options{Workspace: ws, Token: testToken, Loopback: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer hs.CloseClientConnections()
	addr := strings.TrimPrefix(hs.URL, "http://")
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	baseRSS := rss()
	for b.Loop() {
		stop := make(chan struct{})
		peak := make(chan [2]uint64)
		go func() {
			var heap, res uint64
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heap, res = max(heap, m.HeapInuse), max(res, rss())
				select {
				case <-stop:
					peak <- [2]uint64{heap, res}
					return
				case <-t.C:
				}
			}
		}()
		var conns []net.Conn
		for range 6 {
			conns = append(conns, stalledClient(b, addr))
		}
		time.Sleep(time.Second)
		first, _ := backlogTimes(b, hs.URL, 100_000)
		n := readBacklog(b, hs.URL)
		close(stop)
		p := <-peak
		for _, c := range conns {
			c.Close()
		}
		b.ReportMetric(float64(first.Microseconds())/1000, "first-event-ms")
		b.ReportMetric(float64(n), "events")
		b.ReportMetric(float64(p[0]-min(p[0], base.HeapInuse))/(1<<20), "heap-growth-MB")
		b.ReportMetric(float64(p[1]-min(p[1], baseRSS))/(1<<20), "rss-growth-MB")
	}
}

// readBacklog reads the stream until its first state message, which
// follows the backlog, and returns how many events came before it.
func readBacklog(t testing.TB, url string) int {
	t.Helper()
	res, err := http.Get(url + "/api/events/stream?after=0&html=1")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		switch sc.Text() {
		case "event: event":
			n++
		case "event: state":
			return n
		}
	}
	t.Fatalf("the stream ended after %d events: %v", n, sc.Err())
	return n
}

// rss returns the process's resident set in bytes (0 where /proc is
// missing).
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb uint64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

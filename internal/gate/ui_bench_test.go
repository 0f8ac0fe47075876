package gate

import (
	"context"
	"testing"
	"time"
)

// BenchmarkUIRenders times the ui-renders gate on the small app of
// TestUIRenders (one screen, two sizes) against build-succeeds alone in
// the same run: cold is a fresh gate, so it starts Chromium; warm reuses
// the gate's browser, as the iterations of a run do (bench/uigate.sh
// prints them; the goals are under 3 s cold and under 1 s warm).
func BenchmarkUIRenders(b *testing.B) {
	if testing.Short() {
		b.Skip("starts Chromium")
	}
	dir := writeAppTB(b, nil)
	env := Env{Root: dir}
	ctx := context.Background()
	var build, cold, warm time.Duration
	runs := 0
	for b.Loop() {
		bs := &BuildSucceeds{KeepBundle: true}
		start := time.Now()
		if r := bs.Check(ctx, env); r.Status != Pass {
			b.Fatalf("build-succeeds: %s %s", r.Status, r.Message)
		}
		build += time.Since(start)
		g := &UIRenders{Build: bs}
		start = time.Now()
		if r := g.Check(ctx, env); r.Status != Pass {
			b.Fatalf("ui-renders cold: %s %s", r.Status, r.Message)
		}
		cold += time.Since(start)
		start = time.Now()
		if r := g.Check(ctx, env); r.Status != Pass {
			b.Fatalf("ui-renders warm: %s %s", r.Status, r.Message)
		}
		warm += time.Since(start)
		g.Close()
		runs++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(runs) }
	b.ReportMetric(ms(build), "build-ms")
	b.ReportMetric(ms(cold), "cold-ms")
	b.ReportMetric(ms(warm), "warm-ms")
}

package proc

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ralph-harness/ralph/internal/sandbox"
)

// BenchmarkSandboxStart measures what confining an agent costs its start:
// Run of /bin/true under the supervisor, unconfined and confined by the
// policy ralph gives a command agent in a workspace, in turn in the same
// run so both see the same machine. It reports the median of each and
// the median of the pairwise differences (bench/sandbox.sh prints them).
func BenchmarkSandboxStart(b *testing.B) {
	if !sandbox.Probe().Available() {
		b.Skip("no Landlock here")
	}
	conf, err := sandbox.Prepare(&sandbox.Settings{Mode: sandbox.ModeWorkspace}, sandbox.Target{Dir: b.TempDir(), Program: "/bin/true"})
	if err != nil {
		b.Fatal(err)
	}
	defer conf.Close()
	// A confined start includes making the ruleset, as each agent call
	// does.
	run := func(confine bool) time.Duration {
		start := time.Now()
		spec := Spec{Argv: []string{"/bin/true"}}
		if confine {
			rs, err := conf.Policy.Ruleset()
			if err != nil {
				b.Fatal(err)
			}
			defer rs.Close()
			spec.Ruleset = rs
		}
		res, err := Run(context.Background(), spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("run: %v, exit %d, %s", err, res.ExitCode, res.Stderr)
		}
		return time.Since(start)
	}
	var open, confined, diff []time.Duration
	for b.Loop() {
		o, c := run(false), run(true)
		open, confined, diff = append(open, o), append(confined, c), append(diff, c-o)
	}
	b.ReportMetric(ms(median(open)), "ms/unconfined-median")
	b.ReportMetric(ms(median(confined)), "ms/confined-median")
	b.ReportMetric(ms(median(diff)), "ms/overhead-median")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

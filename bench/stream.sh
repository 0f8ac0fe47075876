#!/bin/sh
# Print how fast ralph's readers are: the dashboard's live stream and the
# status commands on a long run.
#
#   bench/stream.sh [CLIENTS [EVENTS]]   (defaults 50 and 100000)
#
#   - event commit to dashboard: CLIENTS live streams open over HTTP as the
#     page reads them, one event committed from another connection at a
#     time; the median and 95th percentile over every client and event
#     (BenchmarkSSELatencyClients, 40 events);
#   - `ralph status` and `ralph log -n 50` on a store of EVENTS events,
#     against `ralph version` (the process start), in turn (bench/bigstore).
set -eu
cd "$(dirname "$0")/.."
work=bench/.work
mkdir -p "$work"
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
before=$(load)
if ! out=$(RALPH_BENCH_CLIENTS="${1:-50}" go test -run '^$' -bench '^BenchmarkSSELatencyClients$' -benchtime 40x -count 1 ./internal/serve/ 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | awk -v lb="$before" -v la="$(load)" '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "?" }
	/^BenchmarkSSELatencyClients/ {
		printf "event commit to dashboard, %d clients, 40 events (load average %s before, %s after):\n", metric("clients"), lb, la
		printf "  p50 %s ms   p95 %s ms\n", metric("p50-ms"), metric("p95-ms")
		found = 1
	}
	END { if (!found) { print "benchmark output not understood" > "/dev/stderr"; exit 1 } }'
go build -o "$work/ralph" ./cmd/ralph
go run ./bench/bigstore -ralph "$work/ralph" -work "${TMPDIR:-/tmp}/ralph-bench-store" -events "${2:-100000}"

#!/bin/sh
# Print ralph's own overhead per iteration, median over N iterations.
#
#   bench/overhead.sh [N [SIZES]]   (defaults 200 and "500,10000,50000,100000")
#
# Runs two benchmarks of internal/engine:
#   BenchmarkIterationOverhead        an in-process agent that does nothing,
#                                     over a committed project of each size
#                                     in SIZES, twice: with the stall
#                                     detector's tree watch (after) and with
#                                     the reference full TreeHash walk each
#                                     iteration (before; RALPH_STALL_WALK=1);
#   BenchmarkIterationOverheadClaude  the claude backend running a fake claude
#                                     that prints a recorded stream-json
#                                     session and exits, over 500 files; the
#                                     fake's own run time is measured apart
#                                     and subtracted.
# Generating a 100,000-file project takes a while; the load average is
# printed with the figures, as they depend on what else the machine runs.
set -eu
cd "$(dirname "$0")/.."
n=${1:-200}
sizes=${2:-500,10000,50000,100000}
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
before=$(load)
if ! out=$(RALPH_BENCH_FILES="$sizes" RALPH_BENCH_TRACKER=both go test -run '^$' -bench '^BenchmarkIterationOverhead(Claude)?$' -benchtime "${n}x" -count 1 -timeout 60m ./internal/engine/ 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | awk -v n="$n" -v lb="$before" -v la="$(load)" '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "?" }
	/^BenchmarkIterationOverheadClaude/ {
		claude = sprintf("ralph overhead per iteration, claude backend, fake claude, 500 files: %s ms (iteration %s ms, fake claude alone %s ms)",
			metric("ms/iter-median"), metric("ms/iter-total-median"), metric("ms/fake-median"))
		next
	}
	/^BenchmarkIterationOverhead\/files=/ {
		split($1, p, "/"); sub("files=", "", p[2]); sub("tracker=", "", p[3]); sub("-[0-9]+$", "", p[3])
		if (!(p[2] in seen)) { seen[p[2]] = 1; order[++k] = p[2] }
		v[p[2], p[3]] = metric("ms/iter-median")
	}
	END {
		if (k == 0 || claude == "") { print "benchmark output not understood" > "/dev/stderr"; exit 1 }
		printf "medians over %s iterations, in-process idle agent (load average %s before, %s after):\n", n, lb, la
		printf "%10s  %22s  %22s\n", "files", "before: full walk (ms)", "after: tree watch (ms)"
		for (i = 1; i <= k; i++) printf "%10s  %22s  %22s\n", order[i], v[order[i], "walk"], v[order[i], "watch"]
		print claude
	}'

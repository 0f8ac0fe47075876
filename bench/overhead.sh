#!/bin/sh
# Print ralph's own overhead per iteration, median over N iterations.
#
#   bench/overhead.sh [N]        (default 200)
#
# Runs two benchmarks of internal/engine over a 500-file project:
#   BenchmarkIterationOverhead        an in-process agent that does nothing;
#   BenchmarkIterationOverheadClaude  the claude backend running a fake claude
#                                     that prints a recorded stream-json
#                                     session and exits; the fake's own run
#                                     time is measured apart and subtracted.
set -eu
cd "$(dirname "$0")/.."
n=${1:-200}
if ! out=$(go test -run '^$' -bench '^BenchmarkIterationOverhead(Claude)?$' -benchtime "${n}x" -count 1 ./internal/engine/ 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | awk -v n="$n" '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "?" }
	/^BenchmarkIterationOverheadClaude/ {
		claude = sprintf("ralph overhead per iteration, claude backend, fake claude: %s ms (iteration %s ms, fake claude alone %s ms)",
			metric("ms/iter-median"), metric("ms/iter-total-median"), metric("ms/fake-median"))
		next
	}
	/^BenchmarkIterationOverhead/ {
		idle = sprintf("ralph overhead per iteration, in-process idle agent:       %s ms", metric("ms/iter-median"))
	}
	END {
		if (idle == "" || claude == "") { print "benchmark output not understood" > "/dev/stderr"; exit 1 }
		printf "medians over %s iterations, 500-file project:\n%s\n%s\n", n, idle, claude
	}'

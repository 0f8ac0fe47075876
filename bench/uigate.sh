#!/bin/sh
# Print how long the ui-renders gate takes on a small app (one screen
# loaded at 1280x800 and 390x844 in headless Chromium), cold (the gate
# starts the browser) and warm (it reuses it, as the iterations of a run
# do), next to build-succeeds alone in the same run. Goals: cold under
# 3 s, warm under 1 s.
#
#   bench/uigate.sh [N]       (default 5 runs)
set -eu
cd "$(dirname "$0")/.."
n=${1:-5}
if ! out=$(CI=true go test -run '^$' -bench '^BenchmarkUIRenders$' -benchtime "${n}x" -count 1 ./internal/gate/ 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | awk -v n="$n" '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "" }
	/^BenchmarkUIRenders/ { b = metric("build-ms"); c = metric("cold-ms"); w = metric("warm-ms") }
	END {
		if (c == "") { print "benchmark output not understood" > "/dev/stderr"; exit 1 }
		printf "build-succeeds %s ms; ui-renders cold %s ms (goal < 3000), warm %s ms (goal < 1000); mean of %s runs\n", b, c, w, n
	}'

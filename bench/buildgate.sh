#!/bin/sh
# Print how long the build-succeeds gate takes on a generated Vite + React
# + TypeScript app of 200 section components (goal: under 300 ms).
#
#   bench/buildgate.sh [N]       (default 20 runs)
#
# Runs BenchmarkBuildSucceeds200 of internal/gate: esbuild bundles the
# app's 407 files in memory, as the gate does at every completion attempt.
set -eu
cd "$(dirname "$0")/.."
n=${1:-20}
if ! out=$(go test -run '^$' -bench '^BenchmarkBuildSucceeds200$' -benchtime "${n}x" -count 1 ./internal/gate/ 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | awk -v n="$n" '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "" }
	/^BenchmarkBuildSucceeds200/ { ms = metric("ms/op") }
	END {
		if (ms == "") { print "benchmark output not understood" > "/dev/stderr"; exit 1 }
		printf "build-succeeds on a 200-component app: %s ms per run (mean of %s runs; goal < 300 ms)\n", ms, n
	}'

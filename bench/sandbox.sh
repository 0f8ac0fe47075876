#!/bin/sh
# Print what confining an agent with the sandbox costs its start, median
# over N starts.
#
#   bench/sandbox.sh [N]   (default 200)
#
# Runs BenchmarkSandboxStart of internal/proc, built as ralph is
# (CGO_ENABLED=0): /bin/true started through ralph's supervisor, in turn
# unconfined and confined by the policy a command agent gets in a
# workspace (Landlock rules for the system, the workspace, a private
# TMPDIR, /dev) -- the ruleset made in ralph and enforced by the
# supervisor, as for every agent call -- so both are measured in the same
# run on the same machine.
# The overhead is the median of the pairwise differences. The load
# average is printed with the figures, as they depend on what else the
# machine runs.
set -eu
cd "$(dirname "$0")/.."
n=${1:-200}
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
before=$(load)
if ! out=$(CGO_ENABLED=0 go test -run '^$' -bench '^BenchmarkSandboxStart$' -benchtime "${n}x" -count 1 ./internal/proc/ 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | awk -v n="$n" -v lb="$before" -v la="$(load)" '
	function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "?" }
	/^BenchmarkSandboxStart/ {
		printf "medians over %s starts of /bin/true under the supervisor (load average %s before, %s after):\n", n, lb, la
		printf "  unconfined %s ms, confined %s ms, overhead of applying the ruleset %s ms\n",
			metric("ms/unconfined-median"), metric("ms/confined-median"), metric("ms/overhead-median")
		found = 1
	}
	/no Landlock here/ { print "no Landlock on this kernel: nothing to measure" > "/dev/stderr"; exit 1 }
	END { if (!found) { print "benchmark output not understood" > "/dev/stderr"; exit 1 } }'

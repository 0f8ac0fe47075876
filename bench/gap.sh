#!/bin/sh
# Print ralph's own time between two agent sessions against the floor: a
# plain loop spawning the same stand-in agent, measured in the same run.
#
#   bench/gap.sh [ITERATIONS [ROUNDS [FILES]]]   (defaults 30, 3, 500)
#
# The stand-in is a claude that prints a recorded stream-json session and
# exits; ralph runs it through its claude backend over a committed project
# of FILES files. Each round runs ralph for ITERATIONS iterations, then
# again with a stand-in that writes one file each time (the gap of an
# iteration that changed something), then the floor loop as often; the
# medians of every gap are printed with the load average, and then what a
# gap holds, for either stand-in: the git processes ralph ran in it (one
# more run with git behind a logging wrapper) and their time. Add
# RALPH_GAP_VS=PATH to measure another ralph binary (another commit's) in
# the same rounds, and RALPH_GAP_BUSY=N to keep N idle processes running
# beside it, as a developer's machine does (ending a session's escaped
# processes once read every process on the machine). See bench/gap for
# the details.
set -eu
cd "$(dirname "$0")/.."
work=bench/.work
mkdir -p "$work"
go build -o "$work/ralph" ./cmd/ralph
go build -o "$work/gap" ./bench/gap
vs=""
[ -n "${RALPH_GAP_VS:-}" ] && vs="-vs $RALPH_GAP_VS"
[ -n "${RALPH_GAP_BUSY:-}" ] && vs="$vs -busy $RALPH_GAP_BUSY"
# shellcheck disable=SC2086 # vs is empty or flags and their values
"$work/gap" -ralph "$work/ralph" -work "${TMPDIR:-/tmp}/ralph-bench-projects" -iterations "${1:-30}" -rounds "${2:-3}" -files "${3:-500}" $vs

#!/bin/sh
# Print what ralph costs on a big tree, against the same figures on a
# small one and against git on the same tree, measured in the same run:
#
#   bench/bigrepo.sh [FILES]   (default 100000; RALPH_BENCH_SMALL=500)
#
#   - one more iteration: the gap between agent sessions at FILES files
#     and at RALPH_BENCH_SMALL files (bench/gap, 10 iterations, 2 rounds);
#   - a task's fixed cost at FILES files: a whole `ralph run` whose agent
#     completes in its first iteration (pre-task snapshot, the stall
#     tracker's first look, the gates, the post-task snapshot), less the
#     agent's own time, against `git add -A && git commit` of one changed
#     file on the same tree (3 rounds).
#
# Add RALPH_GAP_VS=PATH to measure another ralph binary (another
# commit's) in the same rounds, as bench/gap.sh does.
#
# The projects are made once with git fast-import and kept in the temp dir;
# a 100,000-file one takes a few minutes to check out on a loaded machine.
set -eu
cd "$(dirname "$0")/.."
work=bench/.work
mkdir -p "$work"
go build -o "$work/ralph" ./cmd/ralph
go build -o "$work/gap" ./bench/gap
files=${1:-100000}
small=${RALPH_BENCH_SMALL:-500}
vs=""
[ -n "${RALPH_GAP_VS:-}" ] && vs="-vs $RALPH_GAP_VS"
# shellcheck disable=SC2086 # vs is empty or two words
gap() { "$work/gap" -ralph "$work/ralph" -work "${TMPDIR:-/tmp}/ralph-bench-projects" $vs "$@"; }
gap -files "$small" -iterations 10 -rounds 2
gap -files "$files" -iterations 10 -rounds 2
gap -files "$files" -task -rounds 3

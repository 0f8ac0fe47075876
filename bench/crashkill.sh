#!/bin/sh
# Kill ralph with SIGKILL at random moments during `ralph run`, `ralph run
# --worktree`, `ralph snapshot rollback` and `ralph specs run`, continue
# each, and count completed / unresumable / integrity / orphans per mode.
#
#   bench/crashkill.sh [flags for bench/crashkill, e.g. -rounds 50 -modes run,specs]
#
# Builds the ralph binary and runs bench/crashkill against it; see that
# program's doc comment for what each round checks. Repositories go to the
# system temp dir and are removed after each round.
set -eu
cd "$(dirname "$0")/.."
work=bench/.work
mkdir -p "$work"
go build -o "$work/ralph" ./cmd/ralph
go run ./bench/crashkill -ralph "$(cd "$work" && pwd)/ralph" "$@"

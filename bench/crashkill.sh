#!/bin/sh
# Kill `ralph run` with SIGKILL at random moments and check `ralph resume`.
#
#   bench/crashkill.sh [flags for bench/crashkill, e.g. -rounds 50]
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

#!/bin/sh
# Measure what a long event backlog costs ralph serve: a store of 100,000
# events, six clients that open the whole backlog (with HTML) and never
# read it, and one that reads it all.
#
#   bench/serve-backlog.sh [-count N]
#
# Prints the first event's latency for the reading client, the events it
# read, and the peak growth of the Go heap and of the process's resident
# set while the seven streams were open. Streamed a page at a time, the
# growth stays in the tens of megabytes whatever the backlog's length.
set -eu
cd "$(dirname "$0")/.."
exec go test ./internal/serve -run '^$' -bench '^BenchmarkStreamBacklogMemory$' -benchtime 1x "$@"

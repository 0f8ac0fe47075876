#!/bin/sh
# Benchmark ralph's snapshots against plain git and isomorphic-git.
#
#   bench/snapshot.sh [flags for bench/snapshot, e.g. -sizes 1000 -rounds 5]
#
# Builds the ralph binary, installs isomorphic-git from npm into
# bench/.work/node (skipped, with a note, when node or npm is missing) and
# runs bench/snapshot. Generated repositories go to the system temp dir.
#
# Without flags it runs 10,000 files of about 10 KB (5 rounds, with
# isomorphic-git) and 100,000 files of about 1 KB (3 rounds, without
# isomorphic-git, which would take hours), printing for each the ratio of
# ralph's rollback (its undo snapshot included) to git checkout.
set -eu
cd "$(dirname "$0")/.."
work=bench/.work
mkdir -p "$work"

go build -o "$work/ralph" ./cmd/ralph
go build -o "$work/snapshot-bench" ./bench/snapshot

node_flag=""
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	if [ ! -d "$work/node/node_modules/isomorphic-git" ]; then
		mkdir -p "$work/node"
		[ -f "$work/node/package.json" ] || printf '{"private": true}\n' > "$work/node/package.json"
		npm install --prefix "$work/node" --no-audit --no-fund --silent isomorphic-git@1 >&2
	fi
	node_flag="-node-dir $(cd "$work/node" && pwd)"
else
	echo "node or npm not found: skipping isomorphic-git" >&2
fi

bench() { "$work/snapshot-bench" -ralph "$(cd "$work" && pwd)/ralph" "$@"; }
if [ $# -gt 0 ]; then
	# shellcheck disable=SC2086 # node_flag is empty or two words
	bench $node_flag "$@"
else
	# shellcheck disable=SC2086
	bench $node_flag -sizes 10000 -rounds 5
	bench -sizes 100000 -file-kb 1 -rounds 3
fi

#!/bin/sh
# Benchmark ralph's snapshots against plain git and isomorphic-git.
#
#   bench/snapshot.sh [flags for bench/snapshot, e.g. -sizes 1000 -rounds 5]
#
# Builds the ralph binary, installs isomorphic-git from npm into
# bench/.work/node (skipped, with a note, when node or npm is missing) and
# runs bench/snapshot. Generated repositories go to the system temp dir.
set -eu
cd "$(dirname "$0")/.."
work=bench/.work
mkdir -p "$work"

go build -o "$work/ralph" ./cmd/ralph

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

# shellcheck disable=SC2086 # node_flag is empty or two words
go run ./bench/snapshot -ralph "$(cd "$work" && pwd)/ralph" $node_flag "$@"

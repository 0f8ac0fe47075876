#!/usr/bin/env bash
# fuzz-all.sh runs every fuzz target in the module for a short time each.
# Usage: scripts/fuzz-all.sh [DURATION]   (default 10s per target)
set -euo pipefail
time=${1:-10s}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
grep -rl --include='*_test.go' '^func Fuzz' internal | while read -r file; do
	pkg=./$(dirname "$file")
	grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //' | while read -r target; do
		echo "== $pkg $target"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg"
	done
done

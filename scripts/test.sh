#!/usr/bin/env bash
# test.sh is what `make test` runs: it installs everything the tests need
# and runs every test, printing how long each step took.
#
# Steps that do not depend on each other overlap, because a cold CI machine
# has two cores and much of the setup waits on the network:
#
#   - the agent CLIs (npm), Chromium and the git identity install while the
#     Temporal test module (internal/temporaltest, which compiles a whole
#     Temporal server) is vetted and compiled;
#   - the main module is vetted and type-checked for six targets meanwhile;
#   - the Temporal tests run beside the main module's tests, each test
#     binary with its own output, printed whole when it ends.
#
# Any failing step fails the whole run after the others end, so one red
# step never hides another. GO names the go command (default go).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
export GO

t0=$SECONDS
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failed=()

say() { printf '== %s (at %ds)\n' "$*" $((SECONDS - t0)); }

# background NAME CMD... runs CMD in the background with its output in a
# log of its own; collect NAME waits for it and prints that log.
declare -A pids
background() {
	local name=$1
	shift
	say "start: $name"
	("$@") >"$logs/$name.log" 2>&1 &
	pids[$name]=$!
}
collect() {
	local name=$1 rc=0
	wait "${pids[$name]}" || rc=$?
	say "end: $name (exit $rc)"
	cat "$logs/$name.log"
	if ((rc != 0)); then
		failed+=("$name")
	fi
}

installs() {
	./scripts/install-agent-clis.sh
	./scripts/install-chromium.sh
	./scripts/ensure-git-identity.sh
}

temporal_build() {
	cd internal/temporaltest
	"$GO" mod download
	"$GO" vet ./...
	"$GO" test -count=1 -c -o "$logs/temporaltest.test" .
}

temporal_tests() {
	# Run as go test runs a test binary: in the package's directory.
	cd internal/temporaltest
	"$logs/temporaltest.test" -test.count=1 -test.timeout=20m
}

say "go mod download"
"$GO" mod download
background installs installs
background temporal-build temporal_build

say "go vet ./..."
"$GO" vet ./... || failed+=("go vet")
say "type-check six targets"
"$GO" run ./scripts/typecheck linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 || failed+=("typecheck")

collect installs
collect temporal-build
if [[ " ${failed[*]} " != *" temporal-build "* ]]; then
	background temporal-tests temporal_tests
fi

say "go test ./..."
"$GO" test -count=1 -timeout 20m ./... || failed+=("go test")
if [[ -n "${pids[temporal-tests]:-}" ]]; then
	collect temporal-tests
fi

if ((${#failed[@]} > 0)); then
	say "FAILED: ${failed[*]}"
	exit 1
fi
say "all tests passed"

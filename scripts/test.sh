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
#   - the Temporal tests run beside the main module's tests as soon as
#     they are compiled and the installs are done; their output is
#     printed whole when they end.
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
	local rc=0
	./scripts/install-agent-clis.sh && ./scripts/install-chromium.sh && ./scripts/ensure-git-identity.sh || rc=$?
	touch "$logs/installed"
	return "$rc"
}

# temporal vets and compiles the Temporal module while the rest goes on,
# then runs its tests once the installs are done (they need the git
# identity), beside the main module's.
temporal() {
	cd internal/temporaltest
	"$GO" mod download
	"$GO" vet ./...
	"$GO" test -count=1 -c -o "$logs/temporaltest.test" .
	echo "== temporal: compiled (at $((SECONDS - t0))s)"
	while [[ ! -e "$logs/installed" ]]; do sleep 1; done
	# Run as go test runs a test binary: in the package's directory.
	"$logs/temporaltest.test" -test.count=1 -test.timeout=20m
}

say "go mod download"
"$GO" mod download
background installs installs
background temporal temporal

say "go vet ./..."
"$GO" vet ./... || failed+=("go vet")
say "type-check six targets"
"$GO" run ./scripts/typecheck linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 || failed+=("typecheck")

collect installs

say "go test ./..."
"$GO" test -count=1 -timeout 20m ./... || failed+=("go test")
collect temporal

if ((${#failed[@]} > 0)); then
	say "FAILED: ${failed[*]}"
	exit 1
fi
say "all tests passed"

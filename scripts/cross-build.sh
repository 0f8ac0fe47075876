#!/bin/sh
# cross-build.sh: ralph compiles for every system it ships on. `go vet`
# type-checks the code and the tests of each other system (build tags and
# per-system files included); `go build` compiles the rest of the six
# targets. The host's own build and vet run in `make test` already.
set -eu
GO=${GO:-go}
export CGO_ENABLED=0
for target in windows/amd64 darwin/arm64; do
	echo "cross-build: go vet for $target"
	GOOS=${target%/*} GOARCH=${target#*/} "$GO" vet ./...
done
for target in linux/amd64 linux/arm64 darwin/amd64 windows/arm64; do
	case "$target" in "$("$GO" env GOHOSTOS)/$("$GO" env GOHOSTARCH)") continue ;; esac
	echo "cross-build: go build for $target"
	GOOS=${target%/*} GOARCH=${target#*/} "$GO" build ./...
done

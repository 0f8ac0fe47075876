# ralph's build and test entry points. `make test` is the one command that
# installs everything the tests need and runs the whole suite; CI runs it.

GO ?= go

.PHONY: test deps build cross demo fuzz bench

## test: install what the tests need, then run every test. scripts/test.sh
## overlaps the steps that do not depend on each other (the installs wait
## on the network while the Temporal module compiles; the Temporal tests
## run beside the main module's) and prints each step's time.
test:
	GO=$(GO) ./scripts/test.sh

## The tests against an in-process Temporal server live in their own Go
## module (internal/temporaltest), so the server stays out of ralph's
## go.sum and binary; they drive the ralph binary as real processes.

## scripts/typecheck type-checks ralph, tests included, for linux, darwin
## and windows on amd64 and arm64 from source (build tags and per-system
## files as a build would take them), so a change that breaks another
## system fails CI; it takes about a minute where compiling the five other
## targets cold took seventeen. make cross compiles them for a release.

## cross: compile ralph for all six targets (go vet for windows and darwin)
cross:
	GO=$(GO) ./scripts/cross-build.sh

## deps: Go modules, the pinned agent CLIs (npm), Chromium for the
## dashboard's browser tests, and a git identity
deps:
	$(GO) mod download
	cd internal/temporaltest && $(GO) mod download
	./scripts/install-agent-clis.sh
	./scripts/install-chromium.sh
	./scripts/ensure-git-identity.sh

## build: the ralph binary in ./bin
build:
	CGO_ENABLED=0 $(GO) build -o bin/ralph ./cmd/ralph

## demo: the whole lifecycle offline
demo:
	$(GO) run ./cmd/ralph demo

## fuzz: a short run of every fuzz target
fuzz:
	./scripts/fuzz-all.sh 20s

## bench: the harness's own benchmarks, each against a yardstick measured
## in the same run (issue 31: bench/gap.sh, bigrepo.sh, stream.sh)
bench:
	./bench/gap.sh
	./bench/bigrepo.sh
	./bench/stream.sh
	./bench/overhead.sh 50
	./bench/buildgate.sh 20
	$(GO) test -run '^$$' -bench ParseValidate -benchmem ./internal/plan/
	$(GO) test -run '^$$' -bench . -benchtime 40x ./internal/serve/

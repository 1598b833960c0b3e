#!/usr/bin/env bash
# The whole test suite, with all of its set-up, on a fresh machine: `./scripts/test.sh`.
# .ci/run calls exactly this. Needs Go 1.26 and, for the MCP integration tests, Node.js 20 + npm.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how long the one before it took, so CI's 30-minute budget can be watched.
last=$SECONDS
step() { echo "== $* (previous step: $((SECONDS - last)) s)"; last=$SECONDS; }

step "set-up"
./scripts/setup-test-deps.sh

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# The repository holds three Go modules (the host, sdk/ and proto/; see deps_test.go), and
# ./... stops at a nested go.mod, so each is vetted and tested from its own folder.
modules=(. sdk proto)

step "go vet"
for m in "${modules[@]}"; do (cd "$m" && go vet ./...); done
# Releases are built for macOS too (README.md, "Platforms"): its code and its tests must
# compile there, though they run on Linux alone.
step "go vet for macOS (GOOS=darwin)"
for m in "${modules[@]}"; do (cd "$m" && GOOS=darwin go vet ./...); done

step "go test -race"
for m in "${modules[@]}"; do (cd "$m" && go test -race -count=1 -timeout 20m ./...); done

step "package init budgets, without the race detector (startup.txtar)"
go test -count=1 -run '^TestScripts$/^startup$' ./cmd/halo/

step "halo serve load test: 500 runs from 32 clients against each run store"
go test -count=1 -run '^TestLoad$' -v ./host/serve/ -args -load

step "generated protobuf code matches plugin.proto (regenerates with the pinned buf)"
(cd proto && HALO_PROTO_REGEN=1 HALO_BUF="$PWD/../.cache/npm/buf/node_modules/.bin/buf" go test -count=1 -run '^TestGeneratedCodeIsFresh$' ./...)

step "a release, used from outside the repository: go install, a plugin author's project, install.sh"
go test -count=1 -timeout 20m -run '^TestReleaseFromOutside$' ./scripts/release/ -args -release

# 39 targets: at 10 s each this step took 584 s of a 1,535 s CI run. Every seed corpus already
# runs in `go test` above, so CI's fuzzing is a smoke run; fuzz longer by hand
# (`./scripts/fuzz.sh 5m`) after changing a parser or a decoder.
step "short fuzz runs"
./scripts/fuzz.sh 5s
echo "== done (last step: $((SECONDS - last)) s; all: $SECONDS s)"

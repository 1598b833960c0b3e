#!/usr/bin/env bash
# Regenerates the Go code of proto/ from the .proto files, with pinned generators run through
# `go run` (nothing to install; the first run compiles buf, a few minutes). Also reachable as
# `go generate ./...` in proto/ (its own module). Commit the result, stamp included:
#   - TestGeneratedCodeIsFresh compares the stamp with the inputs and outputs on every test run
#     (milliseconds: an edited .proto without regeneration, or a hand-edited .pb.go, fails);
#   - HALO_PROTO_REGEN=1 makes the same test regenerate into a temporary folder and diff, which
#     needs buf compiled: scripts/test.sh runs it once as its own step.
set -euo pipefail
cd "$(dirname "$0")/.."
# buf v1.75.0: the prebuilt one of scripts/npm/buf when it is installed (.cache/npm/buf, by
# scripts/setup-test-deps.sh), else compiled from source.
if [ -x .cache/npm/buf/node_modules/.bin/buf ]; then
  buf() { .cache/npm/buf/node_modules/.bin/buf "$@"; }
else
  buf() { go run github.com/bufbuild/buf/cmd/buf@v1.75.0 "$@"; }
fi
buf lint
buf generate
stamp() {
  sha256sum buf.yaml buf.gen.yaml $(find proto -name '*.proto' -o -name '*.pb.go' | LC_ALL=C sort)
}
stamp > proto/generated.sha256

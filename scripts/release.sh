#!/usr/bin/env bash
# Builds a Halo release, reproducibly: the same commit and Go version give the same bytes on
# any machine (CGO off, -trimpath, no build id, times from the commit).
#
#   ./scripts/release.sh VERSION [OUTDIR]      # default OUTDIR: dist/VERSION
#
# It writes into OUTDIR:
#   halo_VERSION_OS_ARCH/halo      halo for linux and darwin, amd64 and arm64, each with the
#                                  default registry embedded, world-time included
#   world-time-X.Y.Z.halotool      the world-time package (every platform's plugin in one file)
#   SHA256SUMS
# and prints the tags that release the Go modules plugin authors require (sdk/vX.Y.Z and
# proto/vX.Y.Z; see docs/plugins.md, "Getting the SDK"). It tags and uploads nothing.
#
# HALO_RELEASE_PLATFORMS="linux/amd64" builds halo for fewer platforms (the world-time package
# always holds all of its platforms, so its sha256 does not depend on the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/release.sh VERSION [OUTDIR]}
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release: VERSION must look like 1.2.3 or 1.2.3-rc.1, not $version" >&2
  exit 2
fi
out=${2:-dist/$version}
platforms=${HALO_RELEASE_PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}

if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "release: warning: the work tree has changes; this build is not of a commit" >&2
fi

# Times come from the commit, not the clock: publishedAt in the embedded index.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH

echo "-- world-time for every platform (registry/local), rebuilt from scratch"
rm -f registry/local/index.json registry/local/packages/*.halotool
go run ./registry/gen -local

rm -rf "$out" && mkdir -p "$out"
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  echo "-- halo $version for $os/$arch"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
    -ldflags="-s -w -buildid= -X halolang.dev/halo/cmd/halo/internal/version.Version=$version" \
    -o "$out/halo_${version}_${os}_${arch}/halo" ./cmd/halo
done
cp registry/local/packages/*.halotool "$out/"
(cd "$out" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
cat "$out/SHA256SUMS"

sdk=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' sdk/version.go)
proto=$(cd sdk && go list -m -f '{{.Version}}' halolang.dev/halo/proto)
echo
echo "Release $version is in $out. The SDK modules (tag them when they changed since their last tag):"
echo "  git tag proto/$proto  # halolang.dev/halo/proto"
echo "  git tag sdk/v$sdk    # halolang.dev/halo/sdk (sdk/version.go)"

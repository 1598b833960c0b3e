#!/usr/bin/env bash
# Builds a Halo release, reproducibly: the same commit and Go version give the same bytes on
# any machine (CGO off, -trimpath, no build id, times from the commit).
#
#   ./scripts/release.sh VERSION [OUTDIR]      # default OUTDIR: dist/VERSION
#
# It writes OUTDIR, whole or not at all (everything is made in a temporary folder beside it
# and renamed into place at the end, so a step that fails leaves OUTDIR as it was):
#   halo_VERSION_OS_ARCH/halo      halo for linux and darwin, amd64 and arm64, built from the
#                                  module proxy tree below exactly as `go install` builds it
#   world-time-X.Y.Z.halotool      the world-time package (every platform's plugin in one file),
#                                  which every halo of this release names in its default
#                                  registry by its URL under HALO_RELEASE_URL, with its sha256
#   install.sh                     downloads halo for this OS and architecture from
#                                  HALO_RELEASE_URL, checks it, installs it into a folder on PATH
#   goproxy/                       the Go module proxy tree: halolang.dev/halo at vVERSION, and
#                                  halolang.dev/halo/sdk and .../proto at their own versions
#   site/                          the go-import pages the domain serves (docs/plugins.md,
#                                  "Publishing Halo's modules")
#   released/                      the index entry (and key) of world-time that halo embeds:
#                                  commit it as registry/released/ once the release is uploaded
#   SHA256SUMS                     of the binaries, world-time and install.sh
#   SHA256SUMS.minisig             when HALO_SIGN_KEY names a minisign secret key (its password
#                                  in HALO_SIGN_PASSWORD); install.sh then requires it
# and prints the tags that release the Go modules. It tags and uploads nothing. The work tree
# is only read: the build happens in a copy of the files git tracks.
#
# HALO_RELEASE_PLATFORMS="linux/amd64" builds halo for fewer platforms (the world-time package
# always holds all of its platforms, so its sha256 does not depend on the machine).
# HALO_RELEASE_URL is where OUTDIR will be served (default https://halolang.dev/dl/VERSION);
# HALO_GOPROXY_URL where goproxy/ will be (default https://halolang.dev/goproxy).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
usage="usage: scripts/release.sh VERSION [OUTDIR]"
version=${1:?$usage}
# Every input is checked before anything is built.
if ! [[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$ ]]; then
  echo "release: VERSION must look like 1.2.3 or 1.2.3-rc.1, not $version; nothing was built" >&2
  exit 2
fi
out=${2:-dist/$version}
platforms=${HALO_RELEASE_PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
for p in $platforms; do
  case $p in
  linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64) ;;
  *)
    echo "release: HALO_RELEASE_PLATFORMS: $p is not one of linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; nothing was built" >&2
    exit 2
    ;;
  esac
done
base=${HALO_RELEASE_URL:-https://halolang.dev/dl/$version}
base=${base%/}
proxy=${HALO_GOPROXY_URL:-https://halolang.dev/goproxy}
for u in "$base" "$proxy"; do
  case $u in
  https://* | http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:* | http://localhost/*) ;;
  *)
    echo "release: $u: a release is served over https (plain http only on localhost); nothing was built" >&2
    exit 2
    ;;
  esac
done
key=${HALO_SIGN_KEY:-}
if [ -n "$key" ] && ! [ -r "$key" ]; then
  echo "release: HALO_SIGN_KEY=$key cannot be read; nothing was built" >&2
  exit 2
fi
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "release: warning: the work tree has changes; this build is not of a commit" >&2
fi

# Times come from the commit, not the clock: publishedAt in the embedded index, the .info files.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH
commit=$(git rev-parse HEAD 2>/dev/null || echo "")
sdk=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' sdk/version.go)
proto_v=$(cd sdk && go list -m -f '{{.Version}}' halolang.dev/halo/proto)

mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$(dirname "$out")/.halo-release-XXXXXX")
cleanup() {
  chmod -R u+w "$stage" 2>/dev/null || true # the module cache is read-only
  rm -rf "$stage"
}
trap cleanup EXIT
mkdir -p "$stage/src" "$stage/out"
release() { go run "$root/scripts/release" "$@"; }

echo "-- copy the files git tracks (the release is built from them, not from the work tree)"
git ls-files -z | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$stage/src"

echo "-- world-time for every platform, reproducibly"
# Signed with the project's key when HALO_SIGN_KEY is it (halo trusts no other key for
# publisher Halo); otherwise with a key made for this release, whose public half every halo of
# the release embeds and whose secret half is thrown away.
sign=()
project_key=$(sed -n 's/^const PublicKey = "\(.*\)"$/\1/p' registry/keys.go)
if [ -n "$key" ] && [ "$(release pubkey -key "$key")" = "$project_key" ]; then
  sign=(-sign "$key")
fi
go run ./registry/gen -local -out "$stage/wt" -url "$base" "${sign[@]}"
mv "$stage"/wt/packages/*.halotool "$stage/out/"
# The record halo embeds (registry/released/), in the copy it is built from and in OUTDIR, to
# be committed once the release is uploaded, so plain builds of the repository offer it too.
mkdir -p "$stage/out/released"
for f in index.json build.pub; do
  if [ -f "$stage/wt/$f" ]; then
    cp "$stage/wt/$f" "$stage/src/registry/released/$f"
    cp "$stage/wt/$f" "$stage/out/released/$f"
  else
    rm -f "$stage/src/registry/released/$f"
  fi
done

echo "-- the Go module proxy tree (go.mod without replace directives) and the go-import pages"
release modules -src "$stage/src" -version "$version" -commit "$commit" -time "$SOURCE_DATE_EPOCH" \
  -goproxy "$stage/out/goproxy" -site "$stage/out/site" -proxy "$proxy"

# halo is built from that tree as `go install halolang.dev/halo/cmd/halo@vVERSION` builds it,
# with the machine's module cache for its dependencies. A version once in a module cache is
# never read again, so the versions this release publishes are taken out of the cache before
# the build and after it: the cache never keeps a release other than the one uploaded. The go
# command also keeps an index of each module in the module cache, in the build cache, as if
# its files could never change: GODEBUG=goindex=0 reads the files instead, so a version
# released again here with other files is built from them.
modcache=$(go env GOMODCACHE)
forget() {
  for m in "halolang.dev/halo@v$version" "halolang.dev/halo/sdk@v$sdk" "halolang.dev/halo/proto@$proto_v"; do
    if [ -e "$modcache/$m" ]; then chmod -R u+w "$modcache/$m" && rm -rf "${modcache:?}/$m"; fi
    path=${m%@*} v=${m#*@}
    rm -f "$modcache/cache/download/$path/@v/$v".* "$modcache/cache/download/$path/@v/list"
  done
}
trap 'forget; cleanup' EXIT
forget
export GOPATH="$stage/gopath" GOMODCACHE="$modcache" GOFLAGS=-modcacherw GOBIN= CGO_ENABLED=0 GODEBUG=goindex=0
export GOPROXY="file://$stage/out/goproxy,$(go env GOPROXY)"
export GONOSUMDB=halolang.dev/halo
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  echo "-- halo $version for $os/$arch"
  (cd "$stage" && GOOS=$os GOARCH=$arch go install -trimpath -ldflags="-s -w -buildid=" "halolang.dev/halo/cmd/halo@v$version")
  exe="$stage/gopath/bin/${os}_${arch}/halo"
  [ -f "$exe" ] || exe="$stage/gopath/bin/halo" # this machine's own platform
  mkdir -p "$stage/out/halo_${version}_${os}_${arch}"
  mv "$exe" "$stage/out/halo_${version}_${os}_${arch}/halo"
done

echo "-- install.sh"
pub=$project_key
if [ -n "$key" ]; then pub=$(release pubkey -key "$key"); fi
signed=$([ -n "$key" ] && echo yes || echo no)
sed -e "s|@VERSION@|$version|g" -e "s|@BASE@|$base|g" -e "s|@PUBKEY@|$pub|g" -e "s|@SIGNED@|$signed|g" \
  scripts/install.sh >"$stage/out/install.sh"
chmod +x "$stage/out/install.sh"

echo "-- SHA256SUMS"
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }
(cd "$stage/out" && find . -type f ! -path './goproxy/*' ! -path './site/*' ! -path './released/*' ! -name 'SHA256SUMS*' | LC_ALL=C sort |
  while IFS= read -r f; do sha256 "$f"; done >SHA256SUMS)
if [ -n "$key" ]; then
  release sign -key "$key" "$stage/out/SHA256SUMS"
fi

rm -rf "$out"
mv "$stage/out" "$out"
cat "$out/SHA256SUMS"
echo
echo "Release $version is in $out (upload: docs/plugins.md, \"Publishing Halo's modules\")."
echo "Its modules (tag them when they changed since their last tag):"
echo "  git tag v$version      # halolang.dev/halo"
echo "  git tag sdk/v$sdk    # halolang.dev/halo/sdk (sdk/version.go)"
echo "  git tag proto/$proto_v  # halolang.dev/halo/proto"

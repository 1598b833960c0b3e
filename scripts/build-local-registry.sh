#!/usr/bin/env bash
# Builds the default registry's module packages (world-time) into registry/local/, which the
# halo binary embeds when it is built: one package with the plugin executable for every
# platform its manifest lists (linux and darwin, amd64 and arm64), built reproducibly, so the
# package and its sha256 are the same on every machine with the same Go version. They are
# about 27 MiB of Go executables, so they are built here (by set-up, demo.sh and release.sh)
# rather than committed; see docs/packages.md.
# Skipped when registry/local is newer than every source it is built from.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=registry/local/index.json
if [ -f "$stamp" ] && [ -z "$(find plugins/worldtime sdk proto registry/src/world-time registry/generate registry/gen pkgmgr go.sum sdk/go.sum proto/go.sum scripts/build-local-registry.sh -newer "$stamp" -type f 2>/dev/null | head -n 1)" ]; then
  exit 0
fi
echo "-- build the world-time package for linux and darwin, amd64 and arm64 (registry/local)"
go run ./registry/gen -local

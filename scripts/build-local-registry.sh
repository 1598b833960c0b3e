#!/usr/bin/env bash
# Builds the default registry's module packages (world-time) for this machine into
# registry/local/, which the halo binary embeds when it is built. They are Go plugin
# executables, so they are built here rather than committed; see docs/packages.md.
# Skipped when registry/local is newer than every source it is built from.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=registry/local/index.json
if [ -f "$stamp" ] && [ -z "$(find plugins/worldtime sdk proto registry/src/world-time registry/generate pkgmgr go.sum -newer "$stamp" -type f 2>/dev/null | head -n 1)" ]; then
  exit 0
fi
echo "-- build the world-time package for this machine (registry/local)"
go run ./registry/gen -local

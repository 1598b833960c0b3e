#!/usr/bin/env bash
# Installs one pinned npm tree: `scripts/npm-ci.sh SRC DEST CHECK` runs `npm ci` of SRC's
# package.json and package-lock.json into DEST, unless DEST already holds that very lock and
# the file DEST/node_modules/CHECK. Every npm package the tests or benchmarks use is installed
# this way, into .cache/npm/<name>, and again only when its lock changes.
set -euo pipefail
src=$1 dest=$2 check=$3
if cmp -s "$src/package-lock.json" "$dest/package-lock.json" && [ -e "$dest/node_modules/$check" ]; then
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "npm-ci: $src needs Node.js 20+ and npm: install them (Debian: apt-get install -y nodejs npm) and run this again" >&2
  exit 1
fi
echo "-- npm ci $src into $dest"
rm -rf "$dest" && mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error

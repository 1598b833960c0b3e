#!/usr/bin/env bash
# Installs everything the tests need beyond Go's own module download, pinned to versions.
# Safe to run repeatedly: what is already installed is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download

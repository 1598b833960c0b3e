#!/usr/bin/env bash
# Measures host/policy's Redact beside one plain scan and beside the npm package redact-pii, on
# the same 64 KB chunks: `./scripts/bench-redact.sh [benchtime] [count]` (default 2s, 3).
# redact-pii (pinned by host/policy/testdata/npm/package-lock.json) is installed into
# .cache/npm/redact-pii first when node and npm are here; without them the benchmark says so. Run it on a quiet machine: the load is printed before and after,
# and cpu-MB/s (CPU time of this process or of node) is the figure to compare when it is not.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-2s}
n=${2:-3}
if command -v npm >/dev/null; then
  ./scripts/npm-ci.sh host/policy/testdata/npm .cache/npm/redact-pii redact-pii/package.json
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
go test ./host/policy -run '^$' -bench '^BenchmarkRedact64K$' -benchtime="$t" -count="$n"
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

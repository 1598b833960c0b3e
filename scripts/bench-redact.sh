#!/usr/bin/env bash
# Measures host/policy's Redact beside one plain scan and beside the npm package redact-pii, on
# the same 64 KB chunks: `./scripts/bench-redact.sh [benchtime] [count]` (default 2s, 3).
# redact-pii runs under node when scripts/setup-test-deps.sh has installed it; the benchmark
# says so when it is missing. Run it on a quiet machine: the load is printed before and after,
# and cpu-MB/s (CPU time of this process or of node) is the figure to compare when it is not.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-2s}
n=${2:-3}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
go test ./host/policy -run '^$' -bench '^BenchmarkRedact64K$' -benchtime="$t" -count="$n"
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

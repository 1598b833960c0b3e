#!/usr/bin/env bash
# Measures halo mcp's tools/call beside mcp-go's and the TypeScript SDK's servers
# (BenchmarkToolsCall, docs/mcp.md "What a call costs"):
#   ./scripts/bench-mcp.sh [calls] [runs] [filter]     (default 20000, 3, ToolsCall$)
# BenchmarkToolsCallPaired, which measures halo mcp and halo serve beside mcp-go in alternating
# batches (the figures the goals are judged by), is ./scripts/bench-mcp.sh 40000 1 ToolsCallPaired.
# The run records are made in a temporary folder. When that is on ext4 without a journal (which
# slows making a file for minutes after many were removed: docs/mcp.md says why) and this runs
# as root, the benchmark runs on a throwaway ext4 filesystem with a journal, made in a file and
# mounted on a loop device, removed at the end. The TypeScript SDK (pinned) is installed first
# when npm is here. Run it on a quiet machine: the load is printed before and after each run.
# With HALO_BENCH_CPUPROFILE=PREFIX, every server process (halo mcp with records on and off, halo serve, mcp-go's HTTP
# server) writes a CPU profile to PREFIX.PID (go tool pprof -top PREFIX.PID).
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-20000}
runs=${2:-3}
filter=${3:-ToolsCall$}
if command -v npm >/dev/null; then
  ./scripts/npm-ci.sh cmd/halo/internal/mcp/testdata/npm .cache/npm/mcpserver @modelcontextprotocol/sdk/package.json
fi
tmp=${TMPDIR:-/tmp}
dev=$(basename "$(readlink -f "/sys/dev/block/$(mountpoint -d "$(df --output=target "$tmp" | tail -1)")" 2>/dev/null)" 2>/dev/null || true)
if [ -n "$dev" ] && [ "$(cat "/sys/fs/ext4/$dev/journal_task" 2>/dev/null)" = "<none>" ] && [ "$(id -u)" = 0 ]; then
  work=$(mktemp -d /var/tmp/halo-bench.XXXXXX)
  cleanup() { umount "$work/mnt" 2>/dev/null || true; rm -rf "$work"; }
  trap cleanup EXIT
  truncate -s 4G "$work/fs.img"
  # Inode tables are written now, not by a kernel thread during the first runs.
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/fs.img"
  mkdir "$work/mnt"
  mount -o loop "$work/fs.img" "$work/mnt"
  mkdir "$work/mnt/tmp"
  export TMPDIR="$work/mnt/tmp"
  echo "$tmp is on ext4 without a journal ($dev): run records go to a throwaway ext4 with one, $TMPDIR"
fi
go test -c -o "${TMPDIR:-/tmp}/halo-mcp-bench.test" ./cmd/halo/internal/mcp
cd cmd/halo/internal/mcp
for i in $(seq "$runs"); do
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  "${TMPDIR:-/tmp}/halo-mcp-bench.test" -test.run '^$' -test.bench "$filter" -test.benchtime "${calls}x"
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

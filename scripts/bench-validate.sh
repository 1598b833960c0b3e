#!/usr/bin/env bash
# Times `halo validate` of a generated 1 MB program (internal/bigprog: 852 blocks of policies
# with DenyArgs, tools, schemas, agents and pipelines) beside `halo version`, the process
# start-up it cannot go below, paired run by run with farm-bench:
#   ./scripts/bench-validate.sh [runs]   (default 21)
# then host/check's BenchmarkParseValidate and cmd/halo's BenchmarkValidate1MB (the work
# without process start-up). The load is printed before and after: compare the processor
# times and the A/B ratios, not wall times, on a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/halo.built" ./cmd/halo
# Timed through a copy: the kernel may keep a file go build just wrote in large page-cache
# folios, and a process's peak resident memory counts each mapped folio whole (one fresh
# binary peaked at 78 MiB where its copy peaked at 55).
cp "$work/halo.built" "$work/halo"
go test ./internal/bigprog -run '^TestWrite$' -args -o "$work/big.halo" >/dev/null
echo "input: $(wc -c <"$work/big.halo") bytes"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
farm-bench -n "$n" --vs "$work/halo version" -- "$work/halo" validate "$work/big.halo"
go test ./host/check -run '^$' -bench '^BenchmarkParseValidate$' -benchmem -count 5
go test ./cmd/halo/internal/validate -run '^$' -bench '^BenchmarkValidate1MB$' -benchmem -count 5
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

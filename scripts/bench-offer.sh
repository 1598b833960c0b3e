#!/usr/bin/env bash
# What offering tools costs a warm `halo serve` (issue 29's goal: a run that offers 20 tool
# methods and calls none within 1.3 times the same run with tools: none), without the peer
# scripts/bench-agent.sh needs (ai 7 needs Node.js 22): scripts/bench/offer.mjs runs the
# working tree's halo and, in turns in the same run, each git revision named (a build of it):
#   ./scripts/bench-offer.sh [rounds] [runs] [REV...]     (default 3, 300; e.g. main)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
runs=${2:-300}
shift $(($# < 2 ? $# : 2))
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/tree/halo" ./cmd/halo
peers=("tree=$bin/tree/halo")
for rev in "$@"; do
  dir="$bin/rev-${rev//[^A-Za-z0-9._-]/_}"
  mkdir -p "$dir/src"
  git archive "$rev" | tar -x -C "$dir/src"
  (cd "$dir/src" && go build -o "$dir/halo" ./cmd/halo)
  peers+=("$rev=$dir/halo")
done
node scripts/bench/offer.mjs --rounds "$rounds" --runs "$runs" --fake-model scripts/bench/fake-model.mjs "${peers[@]}"

#!/usr/bin/env bash
# Measures an agent run on a warm `halo serve` beside the Vercel AI SDK's generateText (`ai`,
# pinned in scripts/npm/ai), both against one fake OpenAI-compatible model, in the same run,
# in turns (scripts/bench/agent.mjs; docs/serve.md "What an agent run costs" has the figures):
#   ./scripts/bench-agent.sh [rounds] [runs] [long]     (default 3, 200, 20)
# A run that offers 20 tool methods and calls none (and the same with tools: none), a 40-step
# run with 16 KB tool results, the HTTP floor of its requests (net/http alone,
# internal/benchreplay), and the peak memory of each
# peer after 0-step and 40-step runs. Run it on a quiet machine: the load is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
runs=${2:-200}
long=${3:-20}
./scripts/npm-ci.sh scripts/npm/ai .cache/npm/ai ai/package.json
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/halo" ./cmd/halo
go build -o "$bin/benchreplay" ./internal/benchreplay
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
HALO_NPM_DIR="$PWD/.cache/npm/ai" node scripts/bench/agent.mjs --halo "$bin/halo" --replay "$bin/benchreplay" --rounds "$rounds" --runs "$runs" --long "$long"
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Builds bin/halo and runs example pipelines end to end with mocked models and tools: no API
# key, no network. Runs are recorded in a temporary folder, not in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
./scripts/build-local-registry.sh # world-time, embedded in halo (docs/packages.md)
go build -o bin/halo ./cmd/halo
halo=$root/bin/halo
ex=$root/examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# events prints one short line per event of a --events file.
events() {
  sed -E -n 's/^\{"type":"([a-z_]+)".*"at":"[^"]*:([0-9]+):[0-9]+"(.*)$/\1 \2 \3/p' "$1" |
    while read -r type line rest; do
      target=$(printf '%s' "$rest" | sed -E -n 's/.*"target":"([^"]*)".*/\1/p')
      extra=""
      for field in decision rule message; do
        [ -n "$extra" ] || extra=$(printf '%s' "$rest" | sed -E -n 's/.*"'$field'":"([^"]*)".*/\1/p')
      done
      printf '   %-10s line %-3s %-18s %s\n' "$type" "$line" "$target" "$extra"
    done
}

"$halo" version

step "validate the examples"
"$halo" validate "$ex"

step "74-software-team: a fixer agent chooses its own tool calls, the pipeline runs the tests, and loops back while they fail"
sed -n '/^pipeline FixUntilGreen/,$p' "$ex/74-software-team.halo"
# A small project for the real Workspace (Code); the model and the test runner (Tests) are
# mocked. The fixer's policies refuse its write to the test file and its rm -rf.
mkdir -p project/src
printf 'export function parseDate(s: string): Date {\n  return new Date(s.slice(0, 10));\n}\n' >project/src/date.ts
printf 'import { parseDate } from "./src/date";\n' >project/acceptance.test.ts
"$halo" run "$ex/74-software-team.halo" FixUntilGreen \
  --input workdir="$work/project" --input spec="parse ISO dates with offsets" \
  --mocks "$ex/74-software-team.mocks.json" --events fix.jsonl
echo "-- events (agent_tool: a call the fixer's model asked for, and the policies' decision):"
events fix.jsonl
echo "-- project/src/date.ts after the fixer's edits:"
cat project/src/date.ts

step "policies: the first answer is prose, Require(JSON) rejects it, @correct(1) asks again"
"$halo" run "$ex/policies.halo" DecideRefund \
  --input-json '{"request": {"amount": 30, "limit": 50, "reason": "late delivery"}}' \
  --mocks "$ex/policies.mocks.json" --events refund.jsonl
echo "-- events:"
events refund.jsonl

step "stages: a called pipeline, a fan-out, then |! yield pauses the run (exit status 3)"
set +e
"$halo" run "$ex/stages.halo" Check \
  --input-json '{"order": {"id": "x", "items": ["desk lamp"], "total": 40}, "strict": true}' \
  --mocks "$ex/stages.mocks.json"
status=$?
set -e
echo "-- exit status $status; the run is saved in .halo/runs:"
ls .halo/runs

step "halo resume: a person answers, the run goes on from the yield"
"$halo" resume "$ex/stages.halo" last --payload yes --mocks "$ex/stages.mocks.json" --json |
  sed -n '1,/"meta"/p'
echo
echo "Done. Mocks and the Go test API: docs/testing.md; halo run and resume: docs/cli.md."

#!/usr/bin/env bash
# Builds bin/halo and shows Halo's main job on the examples: agents that choose their own tool
# calls, with every call checked against policies in code before it runs; a person approving
# calls; content rules; a run that pauses and goes on. Models are mocked (each example's
# *.mocks.json answers as a model would), so no API key and no network are needed; the
# Workspace tool is real. Everything runs in a temporary folder, not in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Only what the demo runs: halo for this machine (no plugin for other platforms).
started=$SECONDS
echo "-- build bin/halo for $(go env GOOS)/$(go env GOARCH) (the first build compiles every dependency: a few minutes on 2 cores; later ones take seconds)"
go build -o bin/halo ./cmd/halo
echo "-- built in $((SECONDS - started)) s"
halo=$root/bin/halo
ex=$root/examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

bold() { printf '\033[1m%s\033[0m\n' "$*"; }
step() { printf '\n'; bold "== $*"; }
say() { printf '%s\n' "$*" | fold -s -w 96; }
# field NAME prints the string field NAME of the JSON event on stdin, unescaped enough to read.
field() {
  sed -E -n 's/.*"'"$1"'":"(([^"\\]|\\.)*)".*/\1/p' | sed -E 's/\\"/"/g; s/\\u0026/\&/g; s/\\n/ /g; s/\\\\/\\/g'
}
# events prints a --events file as one short line per step of the agent's conversation: each
# model request and what it asked for, each call it asked for and the policies' decision
# (with the reason of a refusal or a person's answer), the pipeline's own tool calls, loops.
events() {
  while IFS= read -r ev; do
    type=$(printf '%s' "$ev" | field type)
    target=$(printf '%s' "$ev" | field target)
    case $type in
    llm)
      calls=$(printf '%s' "$ev" | sed -E -n 's/.*"toolCalls":\[([^]]*)\].*/\1/p' | tr -d '"' | sed 's/,/, /g; s/__/./g')
      step=$(printf '%s' "$ev" | sed -E -n 's/.*"step":([0-9]+).*/\1/p')
      if [ -n "$calls" ]; then
        printf '   model     %-13s request %s asks for: %s\n' "$target" "$step" "$calls"
      else
        printf '   model     %-13s request %s answers: %.90s\n' "$target" "$step" "$(printf '%s' "$ev" | field answer)"
      fi
      ;;
    agent_tool)
      decision=$(printf '%s' "$ev" | field decision)
      args=$(printf '%s' "$ev" | sed -E -n 's/.*"args":(\{[^}]*\}).*/\1/p' | sed -E 's/\\u0026/\&/g')
      printf '   call      %-13s %-9s %.80s\n' "$target" "$decision" "$args"
      detail=$(printf '%s' "$ev" | field detail)
      [ -z "$detail" ] || printf '             %-13s %-9s why: %.100s\n' "" "" "$detail"
      ;;
    tool)
      # A call an agent's model asked for also has its agent_tool line above.
      printf '%s' "$ev" | grep -q '"agent":' || printf '   pipeline  %-13s %.70s\n' "$target" "$(printf '%s' "$ev" | sed -E -n 's/.*"output":(\{[^}]*\}).*/\1/p')"
      ;;
    violation)
      # A refused call has its agent_tool line; an answer a content rule rejects has this one.
      printf '%s' "$ev" | grep -q '"phase":"tool"' ||
        printf '   violation %-13s policy %s, rule %s: %.60s\n' "$target" "$(printf '%s' "$ev" | field policy)" "$(printf '%s' "$ev" | field rule)" "$(printf '%s' "$ev" | field message)"
      ;;
    loop) printf '   loop      back to %s, in a new conversation: %s still holds\n' "$(printf '%s' "$ev" | field agent)" "$(printf '%s' "$ev" | field message)" ;;
    paused) printf '   paused    waits for %s\n' "$(printf '%s' "$ev" | field channel)" ;;
    esac
  done <"$1"
}

"$halo" version

# handbook.halo's File store reads handbook/ in the project folder, here the work folder.
cp -r "$ex/handbook" "$work/handbook"

step "validate the examples"
"$halo" validate "$ex"

step "1. An agent chooses its own tool calls; its policies decide each one before it runs"
say "examples/74-software-team.halo: the fixer may use the Workspace (Code) and Bash (Tests) it equips. Its policy FixerTools keeps it away from the test files and lets it run nothing but bun test:"
echo
sed -n '/^policy FixerTools/,$p' "$ex/74-software-team.halo" | sed 's/^/    /'
echo
say "The model is mocked (examples/74-software-team.mocks.json answers as a model would, with tool calls); the Workspace is real and edits a small project here; the test runner is mocked: it fails twice, then passes."
mkdir -p project/src
printf 'export function parseDate(s: string): Date {\n  return new Date(s.slice(0, 10));\n}\n' >project/src/date.ts
printf 'import { parseDate } from "./src/date";\n' >project/acceptance.test.ts
echo
"$halo" run "$ex/74-software-team.halo" FixUntilGreen \
  --input workdir="$work/project" --input spec="parse ISO dates with offsets" \
  --mocks "$ex/74-software-team.mocks.json" --events fix.jsonl
echo
echo "-- what happened (the --events file, one line a step):"
events fix.jsonl
echo "-- project/src/date.ts after the fixer's allowed edits:"
cat project/src/date.ts
echo "-- project/acceptance.test.ts, which its policy kept it from writing:"
cat project/acceptance.test.ts

step "2. A person approves each write"
say "examples/approvals.halo: ApproveEffects(write) makes every call that changes a file wait for a person. Without a terminal the run pauses (exit status 3) and says how to answer; at a terminal halo run asks instead."
echo
sed 's/^/    /' "$ex/approvals.halo"
mkdir notes
printf -- '- milk\n- eggs\n' >notes/groceries.md
printf -- '- eggs\n- bread\n' >notes/shopping.md
echo
set +e
"$halo" run "$ex/approvals.halo" --input task="merge the duplicate notes" --mocks "$ex/approvals.mocks.json" --events ap1.jsonl
status=$?
set -e
echo "-- exit status $status. The person approves the write:"
set +e
"$halo" resume "$ex/approvals.halo" last --payload approve --mocks "$ex/approvals.mocks.json" --events ap2.jsonl
status=$?
set -e
echo "-- exit status $status: the next call waits too. The person declines it, saying why (the model reads the reason):"
"$halo" resume "$ex/approvals.halo" last --payload 'no, keep shopping.md: I still use it' --mocks "$ex/approvals.mocks.json" --events ap3.jsonl
echo
echo "-- what happened:"
cat ap1.jsonl ap2.jsonl ap3.jsonl >approvals.jsonl
events approvals.jsonl
echo "-- notes/: groceries.md merged, shopping.md kept"
ls notes && cat notes/groceries.md

step "3. Content rules, in code: Require(JSON) rejects a prose answer, @correct(1) asks again"
"$halo" run "$ex/policies.halo" DecideRefund \
  --input-json '{"request": {"amount": 30, "limit": 50, "reason": "late delivery"}}' \
  --mocks "$ex/policies.mocks.json" --events refund.jsonl
echo "-- what happened:"
events refund.jsonl

step "4. A run pauses for a person's answer (|! yield) and goes on from there"
set +e
"$halo" run "$ex/stages.halo" Check \
  --input-json '{"order": {"id": "x", "items": ["desk lamp"], "total": 40}, "strict": true}' \
  --mocks "$ex/stages.mocks.json"
status=$?
set -e
echo "-- exit status $status; the run is saved in .halo/runs. A person answers:"
"$halo" resume "$ex/stages.halo" last --payload yes --mocks "$ex/stages.mocks.json"

echo
say "Done. Every run above is recorded in .halo/runs; halo replay runs one again from its record, halo plan shows a pipeline's worst-case cost, halo test runs test cases. Mocks and tests: docs/testing.md; agents and approvals: docs/agents.md; every command: docs/cli.md."

#!/usr/bin/env bash
# Runs every fuzz target for a short time each: `./scripts/fuzz.sh 10s`.
# The list is kept here so CI runs each target; add a line when you add a Fuzz function.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
targets=(
  "./plugins/workspace FuzzClean"
  "./host/lang FuzzParse"
  "./host/check FuzzCheck"
  "./pkgmgr FuzzParseManifest"
  "./pkgmgr FuzzReadPackage"
  "./cmd/halo/internal/termsafe FuzzString"
  "./host/tool/mcp FuzzSplitCommand"
  "./host/policy/fold FuzzString"
  "./host/policy/fold FuzzUnquote"
  "./host/policy/detect FuzzScan"
  "./host/policy/detect FuzzJSONString"
  "./host/policy FuzzRedact"
  "./host/policy FuzzRedactJSON"
  "./host/policy FuzzRedactLines"
  "./host/policy FuzzDenyArgs"
  "./host/policy FuzzMatchPattern"
  "./sdk FuzzDecodeArgs"
  "./sdk FuzzObjectKeys"
  "./host/runtime FuzzParseMocks"
  "./host/agent FuzzToolCall"
  "./host/agent FuzzDecodeArgs"
  "./host/plan FuzzPlan"
  "./cmd/halo/internal/test FuzzCaseFile"
  "./host/serve FuzzLinkToken"
)
for tgt in "${targets[@]}"; do
  pkg=${tgt% *}; name=${tgt#* }
  echo "-- fuzz $pkg $name ($t)"
  # A package of the sdk module is fuzzed from that module's folder (sdk/go.mod).
  dir=.
  case $pkg in ./sdk | ./sdk/*) dir=sdk pkg=.${pkg#./sdk} ;; esac
  (cd "$dir" && go test -run='^$' -fuzz="^${name}\$" -fuzztime="$t" "$pkg")
done

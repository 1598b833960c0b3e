#!/usr/bin/env bash
# Installs everything the tests need beyond Go's own module download, pinned to versions.
# Safe to run repeatedly: what is already installed is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download

# Tests whose result depends on privileges run again as this unprivileged user
# (internal/usertest); CI runs the tests as root. Created once; nothing to do as non-root.
if [ "$(id -u)" = 0 ] && ! id -u halo-test >/dev/null 2>&1; then
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin halo-test
fi

# The default registry's world-time package: a Go plugin built for this machine, not committed.
./scripts/build-local-registry.sh

# MCP integration tests (host/tool/mcp) run @modelcontextprotocol/server-everything, a server
# nobody here wrote, over stdio and Streamable HTTP. The version and its whole dependency tree
# are pinned by host/tool/mcp/testdata/npm/package-lock.json; `npm ci` installs exactly that
# into .cache/npm/mcp once, and again only when the lock changes.
mcp_npm_dir=.cache/npm/mcp
if ! cmp -s host/tool/mcp/testdata/npm/package-lock.json "$mcp_npm_dir/package-lock.json" ||
  [ ! -f "$mcp_npm_dir/node_modules/@modelcontextprotocol/server-everything/package.json" ]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "setup-test-deps: the MCP tests need Node.js 20+ and npm: install them (Debian: apt-get install -y nodejs npm) and run this script again" >&2
    exit 1
  fi
  echo "-- npm ci @modelcontextprotocol/server-everything into $mcp_npm_dir"
  rm -rf "$mcp_npm_dir" && mkdir -p "$mcp_npm_dir"
  cp host/tool/mcp/testdata/npm/package.json host/tool/mcp/testdata/npm/package-lock.json "$mcp_npm_dir/"
  npm ci --prefix "$mcp_npm_dir" --no-audit --no-fund --loglevel=error
fi

# The MCP server tests (cmd/halo/internal/mcp) run the official TypeScript SDK's client
# (@modelcontextprotocol/sdk) against halo mcp and /mcp, and its server in the benchmarks.
# Pinned by cmd/halo/internal/mcp/testdata/npm/package-lock.json, installed into
# .cache/npm/mcpserver the same way.
sdk_npm_dir=.cache/npm/mcpserver
sdk_lock=cmd/halo/internal/mcp/testdata/npm/package-lock.json
if ! cmp -s "$sdk_lock" "$sdk_npm_dir/package-lock.json" ||
  [ ! -f "$sdk_npm_dir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "setup-test-deps: the MCP tests need Node.js 20+ and npm: install them (Debian: apt-get install -y nodejs npm) and run this script again" >&2
    exit 1
  fi
  echo "-- npm ci @modelcontextprotocol/sdk into $sdk_npm_dir"
  rm -rf "$sdk_npm_dir" && mkdir -p "$sdk_npm_dir"
  cp cmd/halo/internal/mcp/testdata/npm/package.json "$sdk_lock" "$sdk_npm_dir/"
  npm ci --prefix "$sdk_npm_dir" --no-audit --no-fund --loglevel=error
fi

# The npm package redact-pii, the peer BenchmarkRedact64K (host/policy) measures Redact against
# (scripts/bench-redact.sh). Pinned with its dependency tree by
# host/policy/testdata/npm/package-lock.json, installed into .cache/npm/redact-pii the same way.
peer_npm_dir=.cache/npm/redact-pii
if ! cmp -s host/policy/testdata/npm/package-lock.json "$peer_npm_dir/package-lock.json" ||
  [ ! -f "$peer_npm_dir/node_modules/redact-pii/package.json" ]; then
  echo "-- npm ci redact-pii into $peer_npm_dir"
  rm -rf "$peer_npm_dir" && mkdir -p "$peer_npm_dir"
  cp host/policy/testdata/npm/package.json host/policy/testdata/npm/package-lock.json "$peer_npm_dir/"
  npm ci --prefix "$peer_npm_dir" --no-audit --no-fund --loglevel=error
fi

# halo serve's PostgreSQL run store is tested against a real server: internal/pgtest starts a
# throwaway cluster from Debian's postgresql package (initdb and postgres, run as the user
# postgres when the tests run as root, on a Unix socket only). Install it when missing.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-test-deps: the PostgreSQL tests need Debian's postgresql package: run this script as root, or apt-get install -y postgresql" >&2
    exit 1
  fi
  echo "-- apt-get install postgresql"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

# The minisign tool (Debian's package), to prove that package signatures from halo publish
# --sign verify with it (cmd/halo/testdata/trustscript/sign_*.txtar).
if ! command -v minisign >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "-- apt-get install minisign"
    apt-get install -y --no-install-recommends minisign >/dev/null ||
      { apt-get update >/dev/null && apt-get install -y --no-install-recommends minisign >/dev/null; }
  else
    echo "setup-test-deps: the signature tests need the minisign tool (Debian: apt-get install -y minisign)" >&2
    exit 1
  fi
fi

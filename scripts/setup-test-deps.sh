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

# npm packages, each pinned with its whole dependency tree by a committed package-lock.json and
# installed by `npm ci` into .cache/npm/<name> once, and again only when the lock changes:
# - @modelcontextprotocol/server-everything, a server nobody here wrote, which the MCP
#   integration tests (host/tool/mcp) run over stdio and Streamable HTTP;
# - @modelcontextprotocol/sdk, the official TypeScript SDK, whose client the MCP server tests
#   (cmd/halo/internal/mcp) run against halo mcp and /mcp, and whose server the benchmarks;
# - @bufbuild/buf, prebuilt, for the protobuf regeneration check (scripts/proto.sh), which
#   would otherwise compile buf from source for minutes;
# - vscode-tmgrammar-test, which tests the VS Code extension's TextMate grammar on its scope
#   assertions and the examples (editors_test.go).
# (redact-pii, the peer of a policy benchmark, is installed by scripts/bench-redact.sh.)
./scripts/npm-ci.sh host/tool/mcp/testdata/npm .cache/npm/mcp @modelcontextprotocol/server-everything/package.json
./scripts/npm-ci.sh cmd/halo/internal/mcp/testdata/npm .cache/npm/mcpserver @modelcontextprotocol/sdk/package.json
./scripts/npm-ci.sh scripts/npm/buf .cache/npm/buf .bin/buf
./scripts/npm-ci.sh scripts/npm/tmgrammar .cache/npm/tmgrammar vscode-tmgrammar-test/package.json

# Debian packages some tests run for real, installed when missing (one apt-get update, one
# install; CI runs this as root):
# - postgresql: halo serve's PostgreSQL run store is tested against a real server;
#   internal/pgtest starts a throwaway cluster (initdb and postgres, as the user postgres when
#   the tests run as root, on a Unix socket only);
# - minisign: package signatures from halo publish --sign must verify with the minisign tool
#   (cmd/halo/testdata/trustscript/sign_*.txtar);
# - chromium: Studio (host/studio) is tested in headless Chromium, driven by chromedp;
# - neovim: halo lsp is tested end to end in headless Neovim, a real editor showing the
#   diagnostic the server sent (cmd/halo/internal/lspcmd).
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || missing+=(postgresql)
command -v minisign >/dev/null || missing+=(minisign)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || missing+=(chromium)
command -v nvim >/dev/null || missing+=(neovim)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup-test-deps: the tests need ${missing[*]}: run this script as root on Debian, or install them (apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  echo "-- apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# pgvector, for the PostgreSQL VectorStore (host/store): Debian 12 packages none, so the source
# vendored in third_party/pgvector (a pinned release, see third_party/README.md) is built
# against the installed server's headers (postgresql-server-dev-<major>) and installed into
# it, where internal/pgtest's clusters find it (CREATE EXTENSION vector). Built in a
# temporary folder, so the worktree stays clean; skipped when this version is in place.
pgdir=$(ls -d /usr/lib/postgresql/*/ 2>/dev/null | sort -V | tail -1)
if [ -n "$pgdir" ]; then
  pgmajor=$(basename "$pgdir")
  want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" third_party/pgvector/vector.control)
  if [ ! -f "/usr/share/postgresql/$pgmajor/extension/vector--$want.sql" ] || [ ! -f "$pgdir/lib/vector.so" ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "setup-test-deps: pgvector $want is not installed in PostgreSQL $pgmajor: run this script as root" >&2
      exit 1
    fi
    # The server's headers and PGXS (which bring clang and llvm for the JIT bitcode), and the
    # C compiler and make, which a clean machine with only Go may lack.
    build_deps=()
    dpkg -s "postgresql-server-dev-$pgmajor" >/dev/null 2>&1 || build_deps+=("postgresql-server-dev-$pgmajor")
    command -v make >/dev/null || build_deps+=(make)
    command -v gcc >/dev/null || build_deps+=(gcc libc6-dev)
    if [ ${#build_deps[@]} -gt 0 ]; then
      echo "-- apt-get install ${build_deps[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${build_deps[@]}" >/dev/null
    fi
    echo "-- building pgvector $want for PostgreSQL $pgmajor"
    build=$(mktemp -d)
    cp -r third_party/pgvector/. "$build/"
    # OPTFLAGS="" builds for any x86-64, not only this machine's CPU (-march=native).
    make -s -C "$build" OPTFLAGS="" PG_CONFIG="$pgdir/bin/pg_config" >/dev/null
    make -s -C "$build" install PG_CONFIG="$pgdir/bin/pg_config" >/dev/null
    rm -rf "$build"
  fi
fi

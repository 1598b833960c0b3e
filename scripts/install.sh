#!/bin/sh
# Installs halo @VERSION@ for this OS and architecture (linux or macOS, amd64 or arm64):
#
#   curl -fsSL @BASE@/install.sh | sh
#   sh install.sh [--dir DIR] [--base URL]
#
# It downloads SHA256SUMS and, from it, the one halo for this machine from the release's base
# URL (--base, or HALO_INSTALL_BASE; default @BASE@), checks SHA256SUMS's minisign signature
# (SHA256SUMS.minisig) with the key built into this script, checks the download's sha256
# against SHA256SUMS, and only then installs it as DIR/halo (--dir, or HALO_INSTALL_DIR;
# default /usr/local/bin as root, else ~/.local/bin). A download that fails a check installs
# nothing, and the message names the file that failed.
#
# scripts/release.sh writes this file into each release, filling in its version, base URL and
# key; the template is scripts/install.sh in the Halo repository.
set -eu

version='@VERSION@'
base=${HALO_INSTALL_BASE:-'@BASE@'}
# The public half of the key that signed this release's SHA256SUMS (minisign's format), and
# whether the release was signed: a signed release's SHA256SUMS.minisig must be there.
pubkey='@PUBKEY@'
signed='@SIGNED@'
dir=${HALO_INSTALL_DIR:-}

fail() {
  echo "install.sh: $*; nothing was installed" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
  --dir) [ $# -ge 2 ] || fail "--dir needs a folder"; dir=$2; shift 2 ;;
  --base) [ $# -ge 2 ] || fail "--base needs a URL"; base=$2; shift 2 ;;
  -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
  *) fail "unknown argument $1 (want --dir DIR or --base URL)" ;;
  esac
done
base=${base%/}
case $base in
https://* | http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:* | http://localhost/*) ;;
*) fail "$base: downloads need https (plain http only on localhost)" ;;
esac

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) fail "no halo is released for $(uname -s); build it from source (go install halolang.dev/halo/cmd/halo@v$version)" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no halo is released for $(uname -m); build it from source (go install halolang.dev/halo/cmd/halo@v$version)" ;;
esac
if [ -z "$dir" ]; then
  if [ "$(id -u)" = 0 ]; then dir=/usr/local/bin; else dir=$HOME/.local/bin; fi
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t halo-install)
trap 'rm -rf "$tmp"' EXIT INT TERM

# fetch URL FILE: 0 when downloaded, 1 when the server says it is not there, and a failure
# for anything else.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    code=$(curl -sS -L --proto '=https,http' -o "$2" -w '%{http_code}' "$1") || fail "could not download $1"
  elif command -v wget >/dev/null 2>&1; then
    if wget -q -O "$2" "$1"; then code=200; else code=404; fi
  else
    fail "downloading needs curl or wget"
  fi
  case $code in
  200) return 0 ;;
  404) return 1 ;;
  *) fail "$1: the server answered $code" ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    fail "checking downloads needs sha256sum or shasum"
  fi
}

b64decode() { base64 -d 2>/dev/null || base64 -D; }

# verify_openssl FILE SIG: minisign's signature checked with OpenSSL 3 (Ed25519), for a machine
# without minisign. A minisign signature line is "ED" (or "Ed"), the key id and 64 bytes of
# signature over the file's BLAKE2b-512 hash ("ED") or the file itself ("Ed"); the global
# signature covers that signature and the trusted comment.
verify_openssl() {
  command -v openssl >/dev/null 2>&1 && openssl pkeyutl -help 2>&1 | grep -q rawin || return 2
  printf '%s' "$pubkey" | b64decode >"$tmp/pub.bin"
  { printf '\060\052\060\005\006\003\053\145\160\003\041\000'; tail -c 32 "$tmp/pub.bin"; } >"$tmp/pub.der"
  openssl pkey -pubin -inform DER -in "$tmp/pub.der" -out "$tmp/pub.pem" 2>/dev/null || return 1
  sed -n 2p "$2" | b64decode >"$tmp/sig.bin"
  [ "$(head -c 10 "$tmp/sig.bin" | tail -c 8 | od -An -tx1 | tr -d ' \n')" = "$(head -c 10 "$tmp/pub.bin" | tail -c 8 | od -An -tx1 | tr -d ' \n')" ] || return 1
  alg=$(head -c 2 "$tmp/sig.bin")
  tail -c 64 "$tmp/sig.bin" >"$tmp/sig.raw"
  case $alg in
  ED) openssl dgst -blake2b512 -binary "$1" >"$tmp/msg" ;;
  Ed) cp "$1" "$tmp/msg" ;;
  *) return 1 ;;
  esac
  openssl pkeyutl -verify -pubin -inkey "$tmp/pub.pem" -rawin -in "$tmp/msg" -sigfile "$tmp/sig.raw" >/dev/null 2>&1 || return 1
  comment=$(sed -n 3p "$2")
  case $comment in "trusted comment: "*) ;; *) return 1 ;; esac
  { cat "$tmp/sig.raw"; printf '%s' "${comment#trusted comment: }"; } >"$tmp/global.msg"
  sed -n 4p "$2" | b64decode >"$tmp/global.sig"
  openssl pkeyutl -verify -pubin -inkey "$tmp/pub.pem" -rawin -in "$tmp/global.msg" -sigfile "$tmp/global.sig" >/dev/null 2>&1
}

echo "Installing halo $version for $os/$arch from $base"
fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || fail "$base/SHA256SUMS is not there: is $base a Halo release?"
if fetch "$base/SHA256SUMS.minisig" "$tmp/SHA256SUMS.minisig"; then
  if command -v minisign >/dev/null 2>&1; then
    minisign -q -V -P "$pubkey" -m "$tmp/SHA256SUMS" -x "$tmp/SHA256SUMS.minisig" >/dev/null 2>&1 ||
      fail "SHA256SUMS.minisig: the signature of SHA256SUMS does not verify with the release key $pubkey"
  else
    status=0
    verify_openssl "$tmp/SHA256SUMS" "$tmp/SHA256SUMS.minisig" || status=$?
    case $status in
    0) ;;
    2) fail "SHA256SUMS is signed, and checking it needs minisign (apt install minisign, brew install minisign) or OpenSSL 3" ;;
    *) fail "SHA256SUMS.minisig: the signature of SHA256SUMS does not verify with the release key $pubkey" ;;
    esac
  fi
  echo "    SHA256SUMS: signed by the release key"
elif [ "$signed" = yes ]; then
  fail "SHA256SUMS.minisig is missing, but this release is signed"
fi

file=halo_${version}_${os}_${arch}/halo
want=$(awk -v f="./$file" '$2 == f { print $1 }' "$tmp/SHA256SUMS")
[ -n "$want" ] || fail "SHA256SUMS lists no $file"
fetch "$base/$file" "$tmp/halo" || fail "$base/$file is not there"
got=$(sha256 "$tmp/halo")
[ "$got" = "$want" ] || fail "$file: its sha256 is $got, but SHA256SUMS says $want"
echo "    $file: sha256 $got, as SHA256SUMS says"
chmod 755 "$tmp/halo"

mkdir -p "$dir" || fail "cannot create $dir"
# Copied beside its final place and renamed over it, so a halo that is running is not changed
# under it and a failed copy leaves the old one.
cp "$tmp/halo" "$dir/.halo.install.$$" || fail "cannot write to $dir"
mv -f "$dir/.halo.install.$$" "$dir/halo" || { rm -f "$dir/.halo.install.$$"; fail "cannot write to $dir"; }
echo "✓ installed $("$dir/halo" version 2>/dev/null || echo "halo $version") as $dir/halo"
case ":$PATH:" in
*":$dir:"*) ;;
*) echo "    $dir is not on your PATH: add it (export PATH=\"$dir:\$PATH\" in your shell's profile)" ;;
esac

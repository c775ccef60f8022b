#!/usr/bin/env bash
# Installs the npm packages of the browser tests (tests/integration/page/:
# package.json and its package-lock.json, i.e. playwright-core, which drives
# Debian's chromium — it downloads no browser of its own) with `npm ci` into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/node-tools/<lock hash>/.
# npm's default registry is used; nothing is vendored. Idempotent: does nothing
# when that folder is complete. Needs node and npm (scripts/install-deps.sh).
#
#   scripts/install-node-tools.sh                      # install when missing
#   scripts/install-node-tools.sh --print-node-path    # the node_modules folder
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/page" && pwd)"
DEPS_DIR="${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}"
HASH="$(cat "$SRC/package.json" "$SRC/package-lock.json" | sha256sum | cut -c1-16)"
DIR="$DEPS_DIR/node-tools/$HASH"

die() { echo "install-node-tools: $*" >&2; exit 1; }

if [[ "${1:-}" == "--print-node-path" ]]; then echo "$DIR/node_modules"; exit 0; fi
if [[ -f "$DIR/.complete" ]]; then
  echo "install-node-tools: $DIR present"
  exit 0
fi
command -v npm >/dev/null || die "npm not found (scripts/install-deps.sh installs it)"
mkdir -p "$DEPS_DIR/node-tools"
tmp="$(mktemp -d "$DEPS_DIR/node-tools/.fetch-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cp "$SRC/package.json" "$SRC/package-lock.json" "$tmp/"
echo "install-node-tools: npm ci (playwright-core) into $DIR"
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: the tests use /usr/bin/chromium.
(cd "$tmp" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) \
  || die "npm ci failed"
touch "$tmp/.complete"
rm -rf "$DIR"
mv "$tmp" "$DIR"  # atomic: a concurrent run never sees half a folder
trap - EXIT
echo "install-node-tools: $DIR"

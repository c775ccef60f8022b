#!/usr/bin/env bash
# Installs a pinned set of Python packages for the tests: every version in a
# requirements file, fetched with pip (its default index) for Debian's
# /usr/bin/python3 into ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-<name>-<hash>/,
# a folder named after the requirements so a change of pins installs afresh.
# Idempotent: does nothing when that folder is complete. Shared by
# install-openapi-validator.sh and install-api-fuzzer.sh.
#   install-pinned-python.sh NAME REQUIREMENTS MODULE... [--print-path]
# installs (if needed) and prints the folder; each MODULE must then import.
# With --print-path it only prints the folder.
set -euo pipefail

die() { echo "install-pinned-python: $*" >&2; exit 1; }
[[ $# -ge 3 ]] || die "usage: install-pinned-python.sh NAME REQUIREMENTS MODULE... [--print-path]"
NAME="$1"
REQUIREMENTS="$2"
shift 2
PRINT_ONLY=false
MODULES=()
for arg in "$@"; do
  if [[ "$arg" == "--print-path" ]]; then PRINT_ONLY=true; else MODULES+=("$arg"); fi
done
DEPS_DIR="${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}"
HASH="$(sha256sum "$REQUIREMENTS" | cut -c1-12)"
DIR="$DEPS_DIR/python-$NAME-$HASH"

if $PRINT_ONLY; then echo "$DIR"; exit 0; fi
if [[ -f "$DIR/.complete" ]]; then echo "$DIR"; exit 0; fi
/usr/bin/python3 -m pip --version >/dev/null 2>&1 \
  || die "pip for /usr/bin/python3 not found (scripts/install-deps.sh installs python3-pip)"
mkdir -p "$DEPS_DIR"
tmp="$(mktemp -d "$DEPS_DIR/.python-$NAME-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# --target installs beside nothing of the system's; --no-deps keeps to the pins.
/usr/bin/python3 -m pip install --quiet --disable-pip-version-check --no-input \
  --no-deps --target "$tmp" -r "$REQUIREMENTS" >&2 \
  || die "pip could not install $REQUIREMENTS"
imports="$(printf 'import %s; ' "${MODULES[@]}")"
PYTHONPATH="$tmp" /usr/bin/python3 -c "$imports" \
  || die "the packages of $REQUIREMENTS installed in $tmp do not import"
touch "$tmp/.complete"
# A concurrent run may have finished first: keep its folder, drop ours.
mv -T "$tmp" "$DIR" 2>/dev/null || true
[[ -f "$DIR/.complete" ]] || die "could not move the packages into $DIR"
echo "$DIR"

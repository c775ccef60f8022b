#!/usr/bin/env bash
# Installs the OpenAPI validator the API document's test uses
# (tests/integration/openapi_test.py): openapi-core and its dependencies, every
# version pinned in tests/integration/openapi-requirements.txt, fetched with
# pip (its default index) for Debian's /usr/bin/python3 into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-openapi-<hash>/,
# a folder named after the requirements so a change of pins installs afresh.
# Idempotent: does nothing when that folder is complete.
#   install-openapi-validator.sh               install (if needed), print the folder
#   install-openapi-validator.sh --print-path  only print the folder
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$REPO/tests/integration/openapi-requirements.txt"
DEPS_DIR="${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}"
HASH="$(sha256sum "$REQUIREMENTS" | cut -c1-12)"
DIR="$DEPS_DIR/python-openapi-$HASH"

die() { echo "install-openapi-validator: $*" >&2; exit 1; }

if [[ "${1:-}" == "--print-path" ]]; then echo "$DIR"; exit 0; fi
if [[ -f "$DIR/.complete" ]]; then echo "$DIR"; exit 0; fi
/usr/bin/python3 -m pip --version >/dev/null 2>&1 \
  || die "pip for /usr/bin/python3 not found (scripts/install-deps.sh installs python3-pip)"
mkdir -p "$DEPS_DIR"
tmp="$(mktemp -d "$DEPS_DIR/.python-openapi-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# --target installs beside nothing of the system's; --no-deps keeps to the pins.
/usr/bin/python3 -m pip install --quiet --disable-pip-version-check --no-input \
  --no-deps --target "$tmp" -r "$REQUIREMENTS" >&2 \
  || die "pip could not install $REQUIREMENTS"
PYTHONPATH="$tmp" /usr/bin/python3 -c "import openapi_core, openapi_spec_validator" \
  || die "the installed validator does not import"
touch "$tmp/.complete"
# A concurrent run may have finished first: keep its folder, drop ours.
mv -T "$tmp" "$DIR" 2>/dev/null || true
[[ -f "$DIR/.complete" ]] || die "could not move the validator into $DIR"
echo "$DIR"

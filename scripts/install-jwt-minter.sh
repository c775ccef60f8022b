#!/usr/bin/env bash
# Installs the pinned token minter of tests/integration/jwks_auth_test.py:
# PyJWT with cryptography (RS256, ES256), every version pinned in
# tests/integration/jwt-requirements.txt, with pip for Debian's /usr/bin/python3
# into ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-jwt-<hash>/
# (scripts/install-pinned-python.sh). Prints that folder (for sys.path).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/install-pinned-python.sh" jwt \
  "$HERE/../tests/integration/jwt-requirements.txt" jwt cryptography "$@"

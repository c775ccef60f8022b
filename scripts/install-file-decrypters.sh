#!/usr/bin/env bash
# Installs the independent readers of password-protected files that
# tests/render/read_encrypted.py uses: msoffcrypto-tool (Agile-encrypted
# XLSX) and pyzipper (AES zip), every version pinned in
# tests/render/encryption-requirements.txt, with pip for Debian's
# /usr/bin/python3 into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-decrypt-<hash>/
# (scripts/install-pinned-python.sh). Idempotent.
#   install-file-decrypters.sh               install (if needed), print the folder
#   install-file-decrypters.sh --print-path  only print the folder
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/install-pinned-python.sh" decrypt \
  "$HERE/../tests/render/encryption-requirements.txt" msoffcrypto pyzipper "$@"

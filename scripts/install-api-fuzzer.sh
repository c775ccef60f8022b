#!/usr/bin/env bash
# Installs the property-based API tester of tests/integration/api_fuzz_test.py:
# Schemathesis and its dependencies, every version pinned in
# tests/integration/schemathesis-requirements.txt, with pip for Debian's
# /usr/bin/python3 into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-schemathesis-<hash>/
# (scripts/install-pinned-python.sh). Idempotent.
#   install-api-fuzzer.sh               install (if needed), print the folder
#   install-api-fuzzer.sh --print-path  only print the folder
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/install-pinned-python.sh" schemathesis \
  "$HERE/../tests/integration/schemathesis-requirements.txt" schemathesis "$@"

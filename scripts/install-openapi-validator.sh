#!/usr/bin/env bash
# Installs the OpenAPI validator the API document's test uses
# (tests/integration/openapi_test.py): openapi-core and its dependencies, every
# version pinned in tests/integration/openapi-requirements.txt, with pip for
# Debian's /usr/bin/python3 into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-openapi-<hash>/
# (scripts/install-pinned-python.sh). Idempotent.
#   install-openapi-validator.sh               install (if needed), print the folder
#   install-openapi-validator.sh --print-path  only print the folder
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/install-pinned-python.sh" openapi \
  "$HERE/../tests/integration/openapi-requirements.txt" openapi_core openapi_spec_validator "$@"

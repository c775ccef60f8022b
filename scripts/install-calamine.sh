#!/usr/bin/env bash
# Installs the pinned second XLSX reader of tests/integration/rich_columns_test.py:
# python-calamine, pinned in tests/integration/calamine-requirements.txt, with pip
# for Debian's /usr/bin/python3 into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-calamine-<hash>/
# (scripts/install-pinned-python.sh). Prints that folder (for sys.path).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/install-pinned-python.sh" calamine \
  "$HERE/../tests/integration/calamine-requirements.txt" python_calamine "$@"

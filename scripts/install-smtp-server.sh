#!/usr/bin/env bash
# Installs the SMTP server of the mail tests (tests/notify/smtp_server.py):
# aiosmtpd and its two dependencies, every version pinned in
# tests/notify/smtp-requirements.txt, with pip for Debian's /usr/bin/python3 into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/python-smtp-<hash>/
# (scripts/install-pinned-python.sh). Idempotent.
#   install-smtp-server.sh               install (if needed), print the folder
#   install-smtp-server.sh --print-path  only print the folder
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$HERE/install-pinned-python.sh" smtp \
  "$HERE/../tests/notify/smtp-requirements.txt" aiosmtpd "$@"

#!/usr/bin/env bash
# A fleet on one machine: a database, the command channel's broker, an S3 server, the sample
# customer service and three `export-center serve` instances on loopback.
#   scripts/fleet.sh up   [--db mariadb|postgres] [--storage s3|local] [--channel rocketmq|embedded]
#   scripts/fleet.sh soak [same options] [--exports 500] [--kills 6] [--broker-kills 2]
# `--help` lists every option; scripts/fleet.py says what the soak checks.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x build/export-center || ! -x build/customer-service ]]; then
  ./scripts/install-deps.sh
  ./scripts/build.sh
fi
# Debian's python3 carries python3-yaml and python3-openpyxl (scripts/install-deps.sh).
exec /usr/bin/python3 scripts/fleet.py "$@"

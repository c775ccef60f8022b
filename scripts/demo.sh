#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the demo — the
# center on its embedded defaults (SQLite, in-process channel, local files)
# plus the sample customer service; it creates a CUSTOMER_LIST export,
# prints where to download it, and keeps serving until Ctrl-C.
# It installs and builds only what the demo runs; scripts/test.sh adds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --demo
./scripts/build.sh --demo
exec ./build/export-center demo --config config/demo.yaml

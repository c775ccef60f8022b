#!/usr/bin/env bash
# Configures and builds export-center into build/ (Ninja, RelWithDebInfo).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
# Two cores: two jobs keep memory and the machine responsive.
ninja -C build -j "${EXPORT_CENTER_BUILD_JOBS:-2}"
# The Java SDK and its sample service (Maven; offline once cached).
./scripts/build-java.sh

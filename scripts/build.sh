#!/usr/bin/env bash
# Configures and builds export-center into build/ (Ninja, RelWithDebInfo).
#
#   build.sh          # everything: the center, tests, benchmarks and the Java modules
#   build.sh --demo   # only what scripts/demo.sh runs: the center and the sample service
set -euo pipefail
cd "$(dirname "$0")/.."
profile=all
case "${1:-}" in
  --demo) profile=demo ;;
  "") ;;
  *) echo "usage: build.sh [--demo]" >&2; exit 2 ;;
esac
# Two cores: two jobs keep memory and the machine responsive.
jobs="${EXPORT_CENTER_BUILD_JOBS:-2}"

if [ "$profile" = demo ]; then
  # A build/ configured for the tests stays so; a fresh one leaves out the tests, the
  # benchmarks and the backends the demo does not run (it uses SQLite, the embedded channel
  # and local files), so it needs neither their packages nor their compile time.
  if [ ! -f build/build.ninja ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DEXPORT_CENTER_BUILD_TESTS=OFF -DEXPORT_CENTER_BUILD_BENCH=OFF \
      -DEXPORT_CENTER_WITH_POSTGRES=OFF -DEXPORT_CENTER_WITH_MYSQL=OFF \
      -DEXPORT_CENTER_WITH_ROCKETMQ=OFF -DEXPORT_CENTER_WITH_S3=OFF
  fi
  ninja -C build -j "$jobs" export-center customer-service
  exit 0
fi

# -DEXPORT_CENTER_WERROR=ON: a warning in the project's own code fails this build, the one
# the test command (and so CI) runs; a build/ configured before keeps its flags.
if [ ! -f build/build.ninja ] || grep -q '^EXPORT_CENTER_BUILD_TESTS:BOOL=OFF' build/CMakeCache.txt; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEXPORT_CENTER_WERROR=ON \
    -DEXPORT_CENTER_BUILD_TESTS=ON -DEXPORT_CENTER_BUILD_BENCH=ON \
    -DEXPORT_CENTER_WITH_POSTGRES=ON -DEXPORT_CENTER_WITH_MYSQL=ON \
    -DEXPORT_CENTER_WITH_ROCKETMQ=ON -DEXPORT_CENTER_WITH_S3=ON
fi
ninja -C build -j "$jobs"
# The Java SDK and its sample service (Maven; offline once cached).
./scripts/build-java.sh

#!/usr/bin/env bash
# Builds the Debian package of export-center (docs/deploy.md#packages) and prints its path.
#
#   package.sh                     # a release build of the server alone in build-package/
#                                  # (tests and benchmarks off, every backend on), then cpack
#   package.sh --build-dir DIR     # package the export-center already built in DIR (a
#                                  # configured build tree; the package test uses build/)
#   package.sh --out DIR           # write the .deb into DIR (default: the build directory)
#
# The package's version is the project's (CMakeLists.txt), Debian revision 1. The last
# line of the output is the .deb's absolute path; everything else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=""
out_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --out) out_dir="$2"; shift 2 ;;
    *) echo "usage: package.sh [--build-dir DIR] [--out DIR]" >&2; exit 2 ;;
  esac
done
jobs="${EXPORT_CENTER_BUILD_JOBS:-2}"

if [ -z "$build_dir" ]; then
  build_dir=build-package
  # The compile flags of scripts/build.sh's RelWithDebInfo (-O2 -DNDEBUG; the line tables
  # are stripped from the packaged binary), so ccache serves what a build/ compiled with
  # the same ccache settings.
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEXPORT_CENTER_BUILD_TESTS=OFF -DEXPORT_CENTER_BUILD_BENCH=OFF \
    -DEXPORT_CENTER_WITH_POSTGRES=ON -DEXPORT_CENTER_WITH_MYSQL=ON \
    -DEXPORT_CENTER_WITH_ROCKETMQ=ON -DEXPORT_CENTER_WITH_S3=ON >&2
elif [ ! -f "$build_dir/CPackConfig.cmake" ]; then
  echo "package.sh: $build_dir is not a configured build tree (no CPackConfig.cmake)" >&2
  exit 2
fi
ninja -C "$build_dir" -j "$jobs" export-center >&2

out_dir="$(mkdir -p "${out_dir:-$build_dir}" && cd "${out_dir:-$build_dir}" && pwd)"
status=0
log="$(cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$out_dir" 2>&1)" || status=$?
echo "$log" >&2
[ "$status" = 0 ] || exit "$status"
# "CPack: - package: /abs/export-center_<version>-<revision>_<arch>.deb generated."
deb="$(echo "$log" | sed -n 's/^CPack: - package: \(.*\.deb\) generated\.$/\1/p')"
if [ ! -f "$deb" ]; then
  echo "package.sh: cpack made no .deb" >&2
  exit 1
fi
rm -rf "$out_dir/_CPack_Packages"
echo "$deb"

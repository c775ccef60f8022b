#!/usr/bin/env bash
# Builds the RocketMQ decoder fuzzer with clang-14 (libFuzzer + ASan + UBSan)
# and runs it for a bounded number of runs on a copy of the seed corpus.
#   run_fuzzer.sh SOURCE_DIR BUILD_DIR [RUNS]
# Recompiles only when a source is newer than the binary. Fails when clang-14
# or its libFuzzer runtime is missing (scripts/install-deps.sh installs both)
# or when the fuzzer finds a crash (the reproducer is left in BUILD_DIR).
set -euo pipefail
src="$1" build="$2" runs="${3:-20000}"
out="$build/tests/rocketmq/fuzz"
bin="$out/rocketmq_decode_fuzzer"
mkdir -p "$out"
command -v clang++-14 >/dev/null || { echo "run_fuzzer: clang++-14 not found" >&2; exit 1; }

sources=(
  "$src/tests/rocketmq/fuzz/decode_fuzzer.cc"
  "$src/src/rocketmq/message.cc"
  "$src/src/rocketmq/route_data.cc"
  "$src/src/rocketmq/remoting/remoting_command.cc"
  "$src/src/common/status.cc"
)
stale=0
[[ -x "$bin" ]] || stale=1
for f in "${sources[@]}" "$src"/src/rocketmq/*.h "$src"/src/rocketmq/remoting/*.h "$src"/src/common/status.h; do
  [[ "$f" -nt "$bin" ]] && stale=1
done
if [[ $stale == 1 ]]; then
  # The per-target include roots of the CMake build (cmake/ComponentHeaders.cmake).
  clang++-14 -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I "$build/include/ec_rocketmq" -I "$build/include/ec_common" \
    "${sources[@]}" -lz -o "$bin.tmp"
  mv "$bin.tmp" "$bin"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$src"/tests/rocketmq/corpus/* "$work/"
cd "$out"  # crash reproducers land here
"$bin" -runs="$runs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 "$work"

#!/usr/bin/env bash
# The libFuzzer targets (docs/fuzzing.md): builds them in build/fuzz with
# clang-14 (libFuzzer + ASan + UBSan, incremental) and runs one or all.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]   build, then run each for SECONDS (default 600)
#   scripts/fuzz.sh --build                  build only (the CTest fixture fuzz_build)
#   scripts/fuzz.sh --list                   the targets
# Before these: --build-dir DIR (default build/fuzz), --no-build (run what is built),
# --opt 0|1 (the optimisation level a new DIR is configured with; default 1; the
# test command's build/fuzz-test is -O0: half the compile time, slower runs).
# Anything after SECONDS goes to libFuzzer as is (e.g. -jobs=2, -only_ASCII=1).
#
# A run starts from the seed corpus in the repository
# (tests/<component>/fuzz/corpus/TARGET/) plus what earlier runs found
# (DIR/corpus/TARGET/, where new inputs go; the repository's corpus is only
# read). It fails on a crash, a sanitizer report, a leak, an input running
# longer than 10 s (a hang) or more than 2 GiB of memory; the reproducer is
# left in DIR/artifacts/TARGET/ and the command to replay it is printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/fuzz"
do_build=1 only_build=0 list=0 opt=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --opt) opt="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --build) only_build=1; shift ;;
    --list) list=1; shift ;;
    *) break ;;
  esac
done
target="${1:-all}"
seconds="${2:-600}"
shift $(($# > 2 ? 2 : $#))

corpus_of() { find "$root/tests" -type d -path "*/fuzz/corpus/$1" | head -n 1; }
targets() { find "$root/tests" -type d -path '*/fuzz/corpus/*' -prune -printf '%f\n' | sort; }

if [[ $list == 1 ]]; then
  targets
  exit 0
fi

if [[ $do_build == 1 ]]; then
  command -v clang++-14 >/dev/null || {
    echo "fuzz: clang++-14 not found (scripts/install-deps.sh installs it)" >&2
    exit 1
  }
  if [[ ! -f "$build/build.ninja" ]]; then
    # Only what the fuzzers link: no tests, benches or PostgreSQL/MySQL backends.
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 -DEXPORT_CENTER_FUZZ=ON \
      -DEXPORT_CENTER_FUZZ_OPT="$opt" \
      -DEXPORT_CENTER_BUILD_TESTS=OFF -DEXPORT_CENTER_BUILD_BENCH=OFF \
      -DEXPORT_CENTER_WITH_POSTGRES=OFF -DEXPORT_CENTER_WITH_MYSQL=OFF
  fi
  ninja -C "$build" -j "${EXPORT_CENTER_BUILD_JOBS:-2}" fuzzers
fi
[[ $only_build == 1 ]] && exit 0

run_one() {
  local name="$1" corpus bin="$build/bin/$1"
  shift
  corpus="$(corpus_of "$name")"
  [[ -n "$corpus" ]] || { echo "fuzz: no corpus folder tests/*/fuzz/corpus/$name" >&2; return 1; }
  [[ -x "$bin" ]] || { echo "fuzz: $bin is not built (scripts/fuzz.sh --build)" >&2; return 1; }
  local dict=()
  # A dictionary beside the corpus (tests/<component>/fuzz/TARGET.dict) lends
  # the mutator the format's words.
  [[ -f "$(dirname "$(dirname "$corpus")")/$name.dict" ]] &&
    dict=(-dict="$(dirname "$(dirname "$corpus")")/$name.dict")
  mkdir -p "$build/corpus/$name" "$build/artifacts/$name"
  echo "fuzz: $name for ${seconds}s on $corpus"
  # -timeout: one input running this long is a hang. -rss_limit_mb: the
  # process past this is a failure. Leaks are checked after every input (the
  # default). -max_len: inputs (and seeds, which libFuzzer cuts to it) reach
  # 1 MiB, room for JSON nested 500 000 deep: far past the depth at which an
  # unbounded recursive walk overflows the smallest stack a thread of the
  # center has (docs/fuzzing.md#nesting). A -max_len among the extra flags wins.
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/$name/" "${dict[@]}" "$@" \
      "$build/corpus/$name" "$corpus"; then
    echo "fuzz: $name FAILED; replay with: $bin $build/artifacts/$name/<file>" >&2
    return 1
  fi
}

if [[ $target == all ]]; then
  failed=0
  for name in $(targets); do run_one "$name" "$@" || failed=1; done
  exit $failed
fi
run_one "$target" "$@"

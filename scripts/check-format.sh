#!/usr/bin/env bash
# Checks that every C++ file of src/, sdk/, examples/, tests/ and bench/ is
# formatted as .clang-format says (Google style, 100 columns), and lists the
# ones that are not.
#
#   scripts/check-format.sh                # check; exit 1 listing unformatted files
#   scripts/check-format.sh --fix          # rewrite those files in place
#   scripts/check-format.sh [--fix] FILE...  # only these files
#
# Formatting differs between clang-format releases, so this pins the one
# Debian 12 ships (clang-format-14). Environment: CLANG_FORMAT (default
# clang-format-14, else clang-format), EXPORT_CENTER_BUILD_JOBS (parallel
# files, default 2).
set -euo pipefail
# FILE arguments are relative to the caller's directory.
args=()
for a in "$@"; do
  case "$a" in
    -*) args+=("$a") ;;
    *) args+=("$(realpath -m "$a")") ;;
  esac
done
set -- "${args[@]}"
cd "$(dirname "$0")/.."

fix=0
if [ "${1:-}" = "--fix" ]; then
  fix=1
  shift
fi

clang_format="${CLANG_FORMAT:-}"
if [ -z "$clang_format" ]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null; then
      clang_format="$candidate"
      break
    fi
  done
fi
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null; then
  echo "check-format: clang-format not found; run scripts/install-deps.sh" >&2
  exit 2
fi
version="$("$clang_format" --version)"
case "$version" in
  *" version 14."*) ;;
  *) echo "check-format: warning: expected clang-format 14, got: $version" >&2 ;;
esac
# A broken .clang-format would otherwise show up as every file unformatted.
"$clang_format" --dump-config >/dev/null

list="$(mktemp)"
trap 'rm -f "$list"' EXIT
if [ $# -gt 0 ]; then
  printf '%s\n' "$@" >"$list"
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # Tracked and new (not ignored) files.
  git ls-files --cached --others --exclude-standard -- src sdk examples tests bench |
    grep -E '\.(cc|h)$' | sort -u >"$list"
else
  find src sdk examples tests bench -type f \( -name '*.cc' -o -name '*.h' \) | sort >"$list"
fi
total=$(wc -l <"$list")

export clang_format
if [ "$fix" = 1 ]; then
  xargs -P "${EXPORT_CENTER_BUILD_JOBS:-2}" -n 20 "$clang_format" -i <"$list"
  echo "check-format: formatted $total files"
  exit 0
fi

unformatted="$(xargs -P "${EXPORT_CENTER_BUILD_JOBS:-2}" -I{} \
  sh -c '"$clang_format" --dry-run --Werror "$1" >/dev/null 2>&1 || echo "$1"' _ {} <"$list" |
  sort)"
if [ -n "$unformatted" ]; then
  echo "$unformatted"
  count=$(printf '%s\n' "$unformatted" | wc -l)
  echo "check-format: $count of $total files are not formatted; fix with scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: $total files OK"
